import type { StoredFrame } from '../events/event.repository.js';
import { conversationMessages } from '../models/model-prompt.js';

/**
 * A conversation's stored turns, replies and person messages as the analyst reads them, one line
 * each: the model responder's reading of them (its newest, within its budget), each line named.
 */
export function talkText(talk: readonly StoredFrame[]): string {
  return conversationMessages(talk, new Map())
    .map((m) => `${m.role === 'user' ? 'Visitor' : 'Agent'}: ${m.content ?? ''}`)
    .join('\n');
}
