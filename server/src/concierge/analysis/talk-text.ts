import type { StoredFrame } from '../events/event.repository.js';

/** A conversation's stored turns, replies and person messages as the analyst reads them, one line each. */
export function talkText(talk: readonly StoredFrame[]): string {
  return talk
    .map((stored) => {
      const frame = JSON.parse(stored.frame) as { type: string; text: string; name?: string };
      if (frame.type === 'turn_accepted') return `Visitor: ${frame.text}`;
      return frame.name ? `${frame.name} (a person from the team): ${frame.text}` : `Agent: ${frame.text}`;
    })
    .join('\n');
}
