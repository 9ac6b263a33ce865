import { Ajv, type ValidateFunction } from 'ajv';
import { z } from 'zod';
import {
  ACTION_NAME,
  ACTION_NAME_RULE,
  BUILT_IN_TOOLS,
  isBuiltInTool,
  TOOL_NAME,
  TOOL_NAME_RULE,
} from '#protocol/tools';
import { httpUrl } from '../shared/schemas.js';

/** How long the model may take to say its first word, by default (README, An agent without a server). */
export const FIRST_TOKEN_TIMEOUT_MS = 8_000;
/** The reply's length in tokens, by default. */
export const MAX_OUTPUT_TOKENS = 400;

const modelName = z.string().trim().min(1).max(200);

/** A tool call's wait for its answer, at most and by default. */
export const TOOL_TIMEOUT_MS = { max: 30_000, default: 10_000 } as const;
/** Tool rounds a turn may take before the model must answer. */
export const MAX_TOOL_ROUNDS = 5;

const toolName = z
  .string()
  .regex(TOOL_NAME, `${TOOL_NAME_RULE} (as models take function names)`)
  .refine((name) => !isBuiltInTool(name), {
    message: `must not be a built-in tool's name (${BUILT_IN_TOOLS.join(', ')})`,
  });

// Compiled only to check a schema against JSON Schema's own: a tool's validator is its own (compileParameters).
const schemaChecker = new Ajv({ strict: false, validateSchema: true });

/** Each `$ref` in a schema, wherever it sits. */
function* refsOf(schema: unknown): Generator<unknown> {
  if (!schema || typeof schema !== 'object') return;
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$ref') yield value;
    yield* refsOf(value);
  }
}

/**
 * A tool's `parameters` compiled into its validator, in an Ajv of its own: one tool's (one
 * customer's) `$id` can never clash with another's, and a reference can only point inside the
 * schema itself (`#/...`), never at another schema or the network. Throws, saying why, when it
 * cannot be compiled: publish refuses the spec, a call gives the model the error.
 */
export function compileParameters(parameters: Record<string, unknown>): ValidateFunction {
  for (const ref of refsOf(parameters))
    if (typeof ref !== 'string' || !ref.startsWith('#'))
      throw new Error(
        `$ref ${JSON.stringify(ref)} points outside the schema: only references within it (#/...) are followed`,
      );
  const ajv = new Ajv({ strict: false, allErrors: false, validateSchema: false, addUsedSchema: false });
  return ajv.compile(parameters);
}

/**
 * A tool's `parameters`: a JSON Schema of an object. `pattern` and `patternProperties` are
 * refused: a customer's regular expression run on a model's arguments could take the service's
 * CPU for seconds (catastrophic backtracking).
 */
const toolParameters = z
  .record(z.string(), z.unknown())
  .refine((schema) => schema.type === 'object', 'must be a JSON Schema with "type": "object"')
  .refine((schema) => !/"(pattern|patternProperties)"\s*:/.test(JSON.stringify(schema)), {
    message: 'must not use pattern or patternProperties (describe the format in the description instead)',
  })
  .superRefine((schema, ctx) => {
    try {
      if (!schemaChecker.validateSchema(schema))
        return ctx.addIssue({
          code: 'custom',
          message: `is not a valid JSON Schema: ${schemaChecker.errorsText(schemaChecker.errors)}`,
        });
      compileParameters(schema);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `is not a valid JSON Schema: ${(err as Error).message}` });
    }
  });

/** The fields of a tool call's body the service writes: a tool's own `body` may not set them. */
export const TOOL_CALL_FIELDS = [
  'type',
  'call_id',
  'sent_at',
  'deployment_id',
  'conversation_id',
  'turn_id',
  'user',
  'tool',
  'arguments',
] as const;

/** Fields of the customer's own sent with each call, their strings' variables filled in (README, Variables and guardrails). */
const toolBody = z
  .record(z.string(), z.unknown())
  .refine((body) => !TOOL_CALL_FIELDS.some((field) => Object.hasOwn(body, field)), {
    message: `must not set the call's own fields (${TOOL_CALL_FIELDS.join(', ')})`,
  })
  .refine((body) => JSON.stringify(body).length <= 8_192, 'must be at most 8 KB as JSON')
  .meta({
    description: "Fields added to each call's JSON body; their strings may hold {{variables}}, sent as strings",
  });

/** A tool the customer's server runs: the model's call is POSTed to `url`, signed, and its JSON answer given back. */
export const serverTool = z.strictObject({
  name: toolName,
  description: z.string().trim().min(1).max(1_000),
  parameters: toolParameters,
  url: httpUrl,
  timeout_ms: z.number().int().min(100).max(TOOL_TIMEOUT_MS.max).default(TOOL_TIMEOUT_MS.default),
  filler: z.string().trim().min(1).max(200).optional(),
  body: toolBody.optional(),
  confirm: z.boolean().default(false).meta({
    description:
      "Needs the visitor's word: the first call is not sent, the model is told to ask the visitor; the same call in a later turn (after the visitor answered) is",
  }),
});
export type ServerTool = z.infer<typeof serverTool>;

/** A tool the visitor's page runs: the model's call becomes a `client` action on the reply. */
export const clientTool = z.strictObject({
  name: toolName.refine((name) => ACTION_NAME.test(name), `${ACTION_NAME_RULE} (a client action's name)`),
  description: z.string().trim().min(1).max(1_000),
  parameters: toolParameters,
});
export type ClientTool = z.infer<typeof clientTool>;

/** A tool call names its tool: two tools of one name, server or client, could not be told apart. */
const uniqueNames = (spec: { tools: { name: string }[]; client_tools: { name: string }[] }) => {
  const names = [...spec.tools, ...spec.client_tools].map((t) => t.name);
  return new Set(names).size === names.length;
};

/** The model responder's settings in a published spec (README, An agent without a server). */
export const modelResponder = z
  .strictObject({
    type: z.literal('model'),
    endpoint_id: z.uuid().optional().meta({ description: "One of the customer's model endpoints; else MODEL_URL" }),
    model: modelName,
    fallback_model: modelName.optional(),
    temperature: z.number().min(0, 'must be from 0 to 2').max(2, 'must be from 0 to 2').optional(),
    max_output_tokens: z.number().int().min(1).max(4_000).default(MAX_OUTPUT_TOKENS),
    first_token_timeout_ms: z.number().int().min(500).max(60_000).default(FIRST_TOKEN_TIMEOUT_MS),
    tools: serverTool.array().max(32).default([]),
    client_tools: clientTool.array().max(32).default([]),
  })
  .refine(uniqueNames, { message: 'each tool needs a name of its own, among tools and client_tools', path: ['tools'] });
export type ModelResponder = z.infer<typeof modelResponder>;

/** Who answers an agent's turns: the customer's hook (the default) or a model. */
/** The knowledge responder (README, Answers from your documents): the agent's knowledge base answers, no model anywhere. */
export const knowledgeResponder = z.strictObject({
  type: z.literal('knowledge'),
  min_match: z
    .number()
    .min(0, 'must be from 0 to 1')
    .max(1, 'must be from 0 to 1')
    .default(0.5)
    .meta({ description: "The share of the question's words the best passage must hold to answer from it" }),
});
export type KnowledgeResponder = z.infer<typeof knowledgeResponder>;

export const responderSpec = z.discriminatedUnion('type', [
  knowledgeResponder,
  z.strictObject({ type: z.literal('hook') }),
  modelResponder,
]);
export type ResponderSpec = z.infer<typeof responderSpec>;

const HOOK: ResponderSpec = { type: 'hook' };

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
