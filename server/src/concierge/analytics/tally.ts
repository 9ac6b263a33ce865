import type { GuardrailOutcome } from '#protocol/guardrails';
import type { FeedbackRating, TurnFailure } from '#protocol/frames';
import type { RedactionKind } from '#protocol/privacy';

/**
 * What a change counts (README, Knowing how it goes): a conversation started (and by whom), a
 * turn taken, answered (how long after it was taken, and after its first part) or failed, a
 * handoff, a rating (and the one it replaces), the hook calls' durations, a recognition's time.
 */
export interface Tally {
  /** When what it counts happened, if not now: a turn's facts count in the hour it was taken. */
  at?: string;
  conversations?: number;
  visitor?: string;
  turns?: number;
  resolvedAfterMs?: number;
  firstPartAfterMs?: number;
  failed?: TurnFailure[];
  handoffs?: number;
  feedback?: { rating: FeedbackRating; previous: FeedbackRating | null };
  hookMs?: number[];
  /** The recogniser's time for a spoken turn the service heard (README, Voice in every browser). */
  recognitionMs?: number;
  /** A hands-free turn: from the end of the visitor's speech to the first audio of the reply (README, Hands-free voice). */
  voiceToVoiceMs?: number;
  /** A greeting rule's figures (README, Greeting visitors first): its teaser shown or opened, a conversation it started, that conversation's turns. */
  proactive?: { rule: string } & Partial<Record<ProactiveCount, number>>;
  /** Values taken out of what was said before it was stored, by kind (README, Privacy: what is kept). */
  redactions?: Partial<Record<RedactionKind, number>>;
  /** What the agent's guardrails did, a decision each (README, Variables and guardrails). */
  guardrails?: GuardrailOutcome[];
}

export const proactiveCounts = ['shown', 'opened', 'conversations', 'turns'] as const;
export type ProactiveCount = (typeof proactiveCounts)[number];
