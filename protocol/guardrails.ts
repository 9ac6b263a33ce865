/**
 * What a custom guardrail does with a sentence that breaks it (README, Variables and guardrails):
 * the reply is replaced by the refusal, written again once, or handed to a person.
 */
export const guardrailActions = ['refuse', 'retry', 'hand_off'] as const;
export type GuardrailAction = (typeof guardrailActions)[number];

/** The rules a sentence is checked by: the agent's blocked terms, its topics, the injection check and its custom criteria. */
export const guardrailRules = ['blocked_terms', 'topics', 'injection', 'custom'] as const;
export type GuardrailRule = (typeof guardrailRules)[number];

/** What was done: one of the actions, or `flagged`: a custom criterion's model did not judge in time and the sentence went out. */
export const guardrailOutcomes = [...guardrailActions, 'flagged'] as const;
export type GuardrailOutcome = (typeof guardrailOutcomes)[number];

/** One decision about one sentence of a reply, as the history keeps it. */
export interface GuardrailDecision {
  rule: GuardrailRule;
  action: GuardrailOutcome;
  /** Which: the blocked term, or the custom criterion's words. */
  detail?: string;
  /** The sentence that was stopped (or flagged), as the deployment keeps words; never shown to the visitor. */
  sentence?: string;
}
