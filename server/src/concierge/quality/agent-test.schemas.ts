import isSafeRegex from 'safe-regex2';
import { z } from 'zod';
import { TOOL_NAME, TOOL_NAME_RULE } from '#protocol/tools';
import { languageTag } from '#protocol/frames';
import { pageQuery } from '../../http/pagination.js';
import { timestamp } from '../../shared/schemas.js';

/** Tests an agent may have, turns a scripted test may have, and turns a simulation may take at most. */
export const MAX_TESTS = 100;
export const MAX_TEST_TURNS = 20;

const words = (max: number) => z.string().trim().min(1).max(max);

/** A pattern the service runs on replies: short, and without nesting that could take its CPU for seconds. */
const pattern = words(200).superRefine((text, ctx) => {
  try {
    new RegExp(text, 'u');
  } catch (err) {
    return ctx.addIssue({ code: 'custom', message: `is not a regular expression: ${(err as Error).message}` });
  }
  if (!isSafeRegex(text))
    ctx.addIssue({ code: 'custom', message: 'nests repetition (like (a+)+): it could take too long to run' });
});

export const expectation = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('contains'), text: words(500) }),
    z.strictObject({ type: z.literal('not_contains'), text: words(500) }),
    z.strictObject({
      type: z.literal('regex'),
      text: pattern,
      flags: z
        .string()
        .regex(/^(?!.*(.).*\1)[ims]*$/, 'at most i, m and s, each once')
        .optional(),
    }),
    z.strictObject({
      type: z.literal('tool_called'),
      name: z.string().regex(TOOL_NAME, TOOL_NAME_RULE),
      arguments: z.record(z.string(), z.unknown()).optional().meta({ description: 'Each given must be as called' }),
    }),
    z.strictObject({ type: z.literal('handed_off') }),
    z.strictObject({ type: z.literal('cites'), document_id: z.string().min(1).max(100) }),
    z.strictObject({ type: z.literal('judge'), criterion: words(1_000) }),
  ])
  .meta({ id: 'TestExpectation' });
export type Expectation = z.infer<typeof expectation>;

const testFields = {
  name: words(200),
  turns: z
    .strictObject({ visitor: words(2_000) })
    .array()
    .min(1)
    .max(MAX_TEST_TURNS)
    .optional()
    .meta({ description: "The visitor's turns, in order (a scripted test)" }),
  simulation: z
    .strictObject({
      persona: words(1_000),
      goal: words(1_000),
      max_turns: z.number().int().min(1).max(MAX_TEST_TURNS).default(6),
    })
    .optional()
    .meta({ description: 'A model plays the visitor (a simulated test)' }),
  expect: expectation.array().max(20).default([]),
  mocks: z
    .strictObject({ tools: z.record(z.string().regex(TOOL_NAME, TOOL_NAME_RULE), z.unknown()) })
    .optional()
    .meta({ description: "Tools answered as written, not called: the customer's server is not reached" }),
  language: languageTag.optional().meta({ description: "The visitor's language; default the agent's" }),
};

const oneKind = (test: { turns?: unknown; simulation?: unknown }) =>
  (test.turns === undefined) !== (test.simulation === undefined);

export const testBody = z
  .strictObject(testFields)
  .refine(oneKind, { message: 'a test has turns or a simulation, not both', path: ['turns'] })
  .meta({ id: 'AgentTestInput' });
export type TestBody = z.infer<typeof testBody>;

export const createTestBody = z
  .union([testBody, z.strictObject({ from_conversation_id: z.uuid(), name: words(200).optional() })])
  .meta({ id: 'CreateAgentTest' });

export const agentTestSchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid(),
    ...testFields,
    expect: expectation.array(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'AgentTest' });
export type AgentTest = z.infer<typeof agentTestSchema>;

export const testParams = z.object({ id: z.uuid(), test_id: z.uuid() });
export const runParams = z.object({ id: z.uuid(), run_id: z.uuid() });
export const listQuery = pageQuery;

export const runTestsBody = z
  .strictObject({
    version: z.number().int().min(1).optional().meta({ description: 'A published version; default the draft' }),
    deployment_id: z
      .uuid()
      .optional()
      .meta({ description: "Whose hook, limits and voice the run uses; default the agent's oldest active deployment" }),
    test_ids: z.uuid().array().min(1).max(MAX_TESTS).optional().meta({ description: 'Default: every test' }),
  })
  .meta({ id: 'RunAgentTests' });

const verdict = z
  .object({
    expectation,
    passed: z.boolean().nullable().meta({ description: 'null: it could not be checked (reason says why)' }),
    reason: z.string().nullable(),
  })
  .meta({ id: 'TestVerdict' });

export const testResultSchema = z
  .object({
    test_id: z.uuid(),
    name: z.string(),
    passed: z.boolean().meta({ description: 'No expectation failed and the conversation ran to its end' }),
    conversation_id: z.uuid().nullable(),
    transcript: z
      .object({
        role: z.enum(['visitor', 'agent']),
        text: z.string(),
        status: z.string().optional().meta({ description: "An agent turn's that was not answered: failed, expired" }),
      })
      .array(),
    tool_calls: z.object({ name: z.string(), arguments: z.unknown() }).array(),
    handed_off: z.boolean(),
    verdicts: verdict.array(),
    error: z.string().nullable(),
    duration_ms: z.number().int(),
  })
  .meta({ id: 'TestResult' });
export type TestResult = z.infer<typeof testResultSchema>;
export type Verdict = z.infer<typeof verdict>;

export const testRunSchema = z
  .object({
    id: z.uuid(),
    agent_id: z.uuid(),
    deployment_id: z.uuid(),
    version: z.number().int().nullable().meta({ description: 'null: the draft' }),
    status: z.enum(['running', 'passed', 'failed']),
    passed: z.number().int(),
    failed: z.number().int(),
    results: testResultSchema.array(),
    created_at: timestamp,
    finished_at: timestamp.nullable(),
  })
  .meta({ id: 'AgentTestRun' });
export type TestRun = z.infer<typeof testRunSchema>;
