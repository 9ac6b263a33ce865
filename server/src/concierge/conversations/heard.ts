import { SPOKEN_MS_PER_CHAR } from '#protocol/sentences';

/** What the visitor heard of a reply (README, The agent's own voice). */
export interface Heard {
  text: string;
  interrupted: boolean;
}

/** One sentence as it was said: its text as shown, and how long its audio was (unknown for the browser's voice). */
export interface SaidSentence {
  text: string;
  durationMs?: number | undefined;
}

/**
 * What was heard of a reply whose `sentence` was played to `offsetMs`: the sentences before it
 * whole, and that one whole when it `finished`, or cut at the last word boundary before the offset
 * (read proportionally to the sentence's length; the browser's voice, which has no clock, is
 * reckoned at {@link SPOKEN_MS_PER_CHAR}).
 */
export function heardOf(
  sentences: readonly SaidSentence[],
  sentence: number,
  offsetMs: number,
  state: 'finished' | 'interrupted',
): Heard | undefined {
  const played = sentences[sentence];
  if (!played) return undefined;
  const before = sentences.slice(0, sentence).map((s) => s.text);
  if (state === 'finished') return { text: [...before, played.text].join(' '), interrupted: false };
  const durationMs = played.durationMs ?? played.text.length * SPOKEN_MS_PER_CHAR;
  const chars = Math.floor(played.text.length * Math.min(1, offsetMs / Math.max(1, durationMs)));
  const cut = chars >= played.text.length ? played.text : cutAtWord(played.text, chars);
  return { text: [...before, cut].filter(Boolean).join(' '), interrupted: true };
}

/** The words of `text` wholly within its first `chars` characters. */
function cutAtWord(text: string, chars: number): string {
  if (/\s/.test(text[chars] ?? '')) return text.slice(0, chars).trimEnd();
  const lastSpace = text.slice(0, chars).search(/\s\S*$/);
  return lastSpace < 0 ? '' : text.slice(0, lastSpace).trimEnd();
}
