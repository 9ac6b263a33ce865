import { z } from 'zod';
import { notFound } from '../../errors.js';
import { defineRoute, type RouteDef } from '../../http/route.js';
import type { ModelEndpointService } from '../../model-endpoints/model-endpoint.service.js';
import { idParams } from '../../shared/schemas.js';
import { type EgressPolicy, egressFor } from '../../shared/egress.js';
import { streamChat } from './chat-completions.js';

/** A test waits this long for the first token, and the whole answer at most twice as long. */
const TEST_TIMEOUT_MS = 15_000;

const testBody = z
  .strictObject({
    model: z.string().trim().min(1).max(200).meta({ description: 'The `model` to ask' }),
    question: z.string().trim().min(1).max(500).default('Say hello in one short sentence.'),
  })
  .meta({ id: 'ModelEndpointTest' });

const testResult = z
  .object({
    ok: z.boolean(),
    answer: z.string().meta({ description: 'What the model wrote (empty when it failed)' }),
    status: z.number().int().nullable().meta({ description: "The endpoint's HTTP status; null when none came" }),
    first_token_ms: z.number().int().nullable(),
    duration_ms: z.number().int(),
    error: z.string().nullable().meta({ description: 'Why it failed, in words' }),
  })
  .meta({ id: 'ModelEndpointTestResult' });

/**
 * `POST /api/v1/model-endpoints/{id}/test` (README, An agent without a server): one question, as an
 * agent's turn would ask it, so a customer sees the endpoint, its key and a model work before an
 * agent depends on them. Nothing is stored.
 */
export function modelEndpointTestRoute(parts: { endpoints: ModelEndpointService; egress: EgressPolicy }): RouteDef {
  return defineRoute({
    method: 'post',
    path: '/api/v1/model-endpoints/:id/test',
    operationId: 'testModelEndpoint',
    summary: 'Ask a model on the endpoint one question, streamed as a turn would be; nothing is stored',
    tag: 'Model endpoints',
    params: idParams,
    body: testBody,
    errors: ['not_found'],
    success: { status: 200, description: 'How it went (`ok: false` with the reason when it failed)', data: testResult },
    handler: async ({ principal, params, body }) => {
      const target = await parts.endpoints.target(principal.customerId, params.id);
      if (!target) throw notFound('Model endpoint');
      const call = await streamChat(
        { ...target, firstTokenTimeoutMs: TEST_TIMEOUT_MS, timeoutMs: 2 * TEST_TIMEOUT_MS },
        { model: body.model, messages: [{ role: 'user', content: body.question }], max_tokens: 100 },
        egressFor(parts.egress, 'models', principal.customerId),
      );
      return {
        data: {
          ok: !call.failure,
          answer: call.text.trim(),
          status: call.status ?? null,
          first_token_ms: call.firstTokenMs ?? null,
          duration_ms: call.durationMs,
          error: call.failure?.message ?? null,
        },
      };
    },
  });
}
