import { z } from 'zod';
import { AppError } from '../errors.js';

/** How long the model may take to say its first word, by default (README, An agent without a server). */
export const FIRST_TOKEN_TIMEOUT_MS = 8_000;
/** The reply's length in tokens, by default. */
export const MAX_OUTPUT_TOKENS = 400;

const modelName = z.string().trim().min(1).max(200);

/** The model responder's settings in a published spec (README, An agent without a server). */
export const modelResponder = z.strictObject({
  type: z.literal('model'),
  endpoint_id: z.uuid().optional().meta({ description: "One of the customer's model endpoints; else MODEL_URL" }),
  model: modelName,
  fallback_model: modelName.optional(),
  temperature: z.number().min(0, 'must be from 0 to 2').max(2, 'must be from 0 to 2').optional(),
  max_output_tokens: z.number().int().min(1).max(4_000).default(MAX_OUTPUT_TOKENS),
  first_token_timeout_ms: z.number().int().min(500).max(60_000).default(FIRST_TOKEN_TIMEOUT_MS),
});
export type ModelResponder = z.infer<typeof modelResponder>;

/** Who answers an agent's turns: the customer's hook (the default) or a model. */
export const responderSpec = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('hook') }),
  modelResponder,
]);
export type ResponderSpec = z.infer<typeof responderSpec>;

const HOOK: ResponderSpec = { type: 'hook' };

/** Refuses a spec whose responder the service could not run, naming each field and why. */
export function checkSpecResponder(spec: unknown): void {
  const responder = (spec as { responder?: unknown } | null)?.responder;
  if (responder === undefined) return;
  const parsed = responderSpec.safeParse(responder);
  if (parsed.success) return;
  throw new AppError(
    'invalid_request',
    "The draft's responder cannot be used; nothing was published",
    parsed.error.issues.map((issue) => ({
      path: ['draft_spec', 'responder', ...issue.path].join('.'),
      message: issue.message,
    })),
  );
}

/** The published spec's responder; a spec without one (or one published before it was checked) answers through the hook. */
export function responderOf(spec: Record<string, unknown>): ResponderSpec {
  const parsed = responderSpec.safeParse(spec.responder ?? HOOK);
  return parsed.success ? parsed.data : HOOK;
}

/** What the model is told of who it is: the spec's persona and instructions, as text (either may be a string, a list or an object). */
export function promptOf(spec: Record<string, unknown>): { persona: string; instructions: string } {
  return { persona: asText(spec.persona), instructions: asText(spec.instructions) };
}

function asText(value: unknown): string {
  if (typeof value === 'string') return value.trim();
  if (Array.isArray(value)) return value.map(asText).filter(Boolean).join('\n');
  if (value && typeof value === 'object')
    return Object.entries(value)
      .map(([key, v]) => `${key}: ${asText(v)}`)
      .join('\n');
  return value === undefined || value === null ? '' : String(value);
}
