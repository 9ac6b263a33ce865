import type { ReplyAction } from '#protocol/frames';
import type { TurnFailure } from './conversation.table.js';

/**
 * How whoever answers a turn answered it (README, An agent without a server), in the turn core's
 * words: a reply (with the reason it hands the conversation to a person, if it does), the promise
 * of one (a hook's bare 2xx, a model that starts writing), or a failure.
 */
export type Answer =
  | { kind: 'replied'; text: string; actions: ReplyAction[]; handoff?: string | undefined }
  | { kind: 'acknowledged'; handoff?: string | undefined }
  | { kind: 'failed'; reason: Extract<TurnFailure, 'hook_rejected' | 'hook_failed' | 'model_failed'> };
