import type { ClientMessage, FeedbackRating, RecognitionEngine, ReplyAction } from '#protocol/frames';
import type { TurnStatus } from './conversation.table.js';

/** A visitor's turn as the widget sends it. */
export type TurnInput = Omit<Extract<ClientMessage, { type: 'user_turn' }>, 'type'> & {
  /** How the service heard a spoken turn (README, Voice in every browser). */
  recognition?: { engine: RecognitionEngine; durationMs: number; audioMs: number };
  /** A turn the service found in an open mic (README, Hands-free voice): its speech, and the quiet that ended it. */
  handsFree?: { speechMs: number; endOfTurnMs: number };
};

/** A reply: its text and actions, and the name of the person who wrote it (none when the agent did). */
export interface Reply {
  text: string;
  actions: ReplyAction[];
  by?: string;
  /** The reply hands the conversation to a person: a notice, which the widget offers no rating for. */
  handoff?: true;
}

/** A visitor's rating of a reply, and what they said of it. */
export interface Feedback {
  rating: FeedbackRating;
  comment?: string;
}

/** One part of a reply as it is written (README, Streaming a reply). */
export interface ReplyPart {
  part: number;
  text: string;
}

/**
 * What became of a reply or a part: `stored`; an identical repeat (`duplicate`); a part's number
 * taken by other text (`conflict`); parts past their total (`too_long`); or no such turn, or a
 * turn in a state that takes none.
 */
export type ReplyTaken =
  'stored' | 'duplicate' | 'conflict' | 'too_long' | 'not_found' | Exclude<TurnStatus, 'acknowledged'>;
