import { z } from 'zod';

export const criterionResults = ['success', 'failure', 'unknown'] as const;
export type CriterionResult = (typeof criterionResults)[number];

/**
 * A conversation's analysis (README, Tests and analysis) as the history, the export and the
 * `conversation.analyzed` transcript event give it.
 */
export const analysisSchema = z
  .strictObject({
    summary: z.string().nullable().meta({ description: 'null when the agent asks for none' }),
    fields: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))
      .meta({ description: "Each of the agent's analysis fields; null when the conversation did not say" }),
    criteria: z.record(z.string(), z.strictObject({ result: z.enum(criterionResults), reason: z.string() })),
    agent_version: z.number().int().nullable(),
    at: z.iso.datetime(),
  })
  .meta({ id: 'ConversationAnalysis' });
export type ConversationAnalysis = z.infer<typeof analysisSchema>;
