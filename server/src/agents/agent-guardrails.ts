import { z } from 'zod';
import { guardrailActions } from '#protocol/guardrails';

/** Custom criteria and blocked terms an agent may have at most (README, Variables and guardrails). */
export const MAX_CUSTOM_CRITERIA = 10;
export const MAX_BLOCKED_TERMS = 200;

/**
 * What a model agent's replies may not say (README, Variables and guardrails): each sentence is
 * checked before it is shown or spoken.
 */
export const guardrailsSpec = z
  .strictObject({
    topics: z
      .strictObject({
        allowed: z
          .array(z.string().trim().min(1).max(200))
          .min(1)
          .max(30)
          .meta({ description: 'What the agent talks about, in a few words each ("rooms and rates", "the spa")' }),
      })
      .optional()
      .meta({ description: 'Told to the model, and each sentence judged by a model with the custom criteria' }),
    refuse_text: z
      .string()
      .trim()
      .min(1)
      .max(300)
      .optional()
      .meta({ description: "Said instead of a stopped reply; default: the widget's language's own words" }),
    blocked_terms: z
      .array(z.string().trim().min(2).max(100))
      .max(MAX_BLOCKED_TERMS)
      .optional()
      .meta({ description: 'Words or phrases no sentence may say (whole words, any case)' }),
    injection: z
      .boolean()
      .default(true)
      .meta({ description: "A sentence that repeats the agent's own instructions is stopped" }),
    custom: z
      .array(
        z.strictObject({
          criterion: z
            .string()
            .trim()
            .min(3)
            .max(500)
            .meta({ description: 'What a sentence must not do, in words ("promises a discount")' }),
          action: z.enum(guardrailActions),
        }),
      )
      .max(MAX_CUSTOM_CRITERIA)
      .optional()
      .meta({ description: 'Judged by a model within 300 ms; a sentence not judged in time goes out, flagged' }),
  })
  .meta({ id: 'Guardrails' });
export type GuardrailsSpec = z.infer<typeof guardrailsSpec>;

/** The published spec's guardrails; none (or ones that no longer parse) leave the default: injection only. */
export function guardrailsOf(spec: Record<string, unknown>): GuardrailsSpec {
  const parsed = guardrailsSpec.safeParse(spec.guardrails ?? {});
  return parsed.success ? parsed.data : { injection: true };
}
