import { z } from 'zod';

/** Fields and criteria an analysis may ask for at most (README, Tests and analysis). */
export const MAX_ANALYSIS_FIELDS = 20;
export const MAX_ANALYSIS_CRITERIA = 10;

const key = z
  .string()
  .regex(
    /^[a-z][a-z0-9_]{0,39}$/,
    'must be lowercase letters, digits and underscores, starting with a letter (at most 40)',
  );
const description = z.string().trim().min(1).max(500);

const analysisField = z
  .strictObject({
    name: key,
    type: z.enum(['string', 'number', 'boolean', 'enum']),
    description,
    values: z.array(z.string().trim().min(1).max(60)).min(2).max(20).optional(),
  })
  .refine((f) => (f.type === 'enum') === (f.values !== undefined), {
    message: 'values are given for an enum field, and only for one',
    path: ['values'],
  });

const unique = (items: { name?: string; id?: string }[]) => {
  const names = items.map((i) => i.name ?? i.id);
  return new Set(names).size === names.length;
};

/**
 * What the service asks of every ended conversation (README, Tests and analysis): a summary, the
 * fields it fills in, and whether each criterion was met.
 */
export const analysisSpec = z.strictObject({
  summary: z.boolean().default(true),
  fields: analysisField
    .array()
    .max(MAX_ANALYSIS_FIELDS)
    .default([])
    .refine(unique, 'each field needs a name of its own'),
  criteria: z
    .strictObject({ id: key, description })
    .array()
    .max(MAX_ANALYSIS_CRITERIA)
    .default([])
    .refine(unique, 'each criterion needs an id of its own'),
});
export type AnalysisSpec = z.infer<typeof analysisSpec>;
export type AnalysisField = AnalysisSpec['fields'][number];

/**
 * The model that judges tests, plays simulated visitors and analyses conversations: an endpoint of
 * the customer's and a model name; absent, the agent's own model (a model responder's), else the
 * service's MODEL_URL with `model`.
 */
export const evaluationSpec = z.strictObject({
  endpoint_id: z.uuid().optional().meta({ description: "One of the customer's model endpoints; else the agent's" }),
  model: z.string().trim().min(1).max(200).optional(),
});
export type EvaluationSpec = z.infer<typeof evaluationSpec>;

/** The quality keys of an agent's spec as the service reads them (README, Tests and analysis). */
export const qualityFields = {
  analysis: analysisSpec.optional(),
  evaluation: evaluationSpec.optional(),
  require_tests: z.boolean().optional().meta({ description: 'Publish refuses (409 tests_failed) while a test fails' }),
};

/** The published spec's analysis; none when it asks for none (or an older spec's cannot be read). */
export function analysisOf(spec: Record<string, unknown>): AnalysisSpec | undefined {
  const parsed = analysisSpec.safeParse(spec.analysis);
  if (!parsed.success) return undefined;
  const { summary, fields, criteria } = parsed.data;
  return summary || fields.length || criteria.length ? parsed.data : undefined;
}

export function evaluationOf(spec: Record<string, unknown>): EvaluationSpec {
  const parsed = evaluationSpec.safeParse(spec.evaluation ?? {});
  return parsed.success ? parsed.data : {};
}
