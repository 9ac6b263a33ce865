import { z } from 'zod';
import type { ZodOpenApiOperationObject, ZodOpenApiPathsObject } from 'zod-openapi';
import { transcriptEventTypes } from '#protocol/transcript-events';
import {
  hookAnswerBody,
  signatureHeaders,
  transcriptEventBodies,
  toolCallBody,
  turnCreatedBody,
} from './concierge/outbound.schemas.js';

const headersOf = (own: Record<string, string>) =>
  z.object(
    Object.fromEntries(
      Object.entries({ ...own, ...signatureHeaders }).map(([name, description]) => [
        name,
        z.string().meta({ description }),
      ]),
    ),
  );

const turnHook: ZodOpenApiOperationObject = {
  operationId: 'turnCreatedHook',
  summary: "Your turn hook: one call per visitor turn, POSTed to the deployment's channel_config.hook_url",
  description:
    'Answer within `runtime_config.hook_timeout_ms` (default 5000). A 2xx acknowledges the turn: reply later by POSTing to `reply_url`, or at once with `{"reply_text": ...}` in the answer. 5xx, 408, 429, a timeout or a network error are retried twice (after about 0.25 s and 1 s) with the same `delivery_id`; any other 4xx fails the turn (`hook_rejected`) without retry.',
  tags: ['Webhooks'],
  requestParams: {
    header: headersOf({ 'X-Service-Delivery': 'The delivery id: the same on every retry of this turn' }),
  },
  requestBody: { required: true, content: { 'application/json': { schema: turnCreatedBody } } },
  responses: {
    '200': {
      description: 'Acknowledged, and resolved at once when the body carries `reply_text`',
      content: { 'application/json': { schema: hookAnswerBody } },
    },
    '202': {
      description: 'Acknowledged: the reply follows through `reply_url` (any 2xx without `reply_text` means the same)',
    },
    '400': { description: 'Refused: the turn fails with `hook_rejected`, no retry (so does any 4xx but 408 and 429)' },
    '503': { description: 'Retried twice, then the turn fails with `hook_failed` (so do any 5xx, 408 and 429)' },
  },
};

const toolHook: ZodOpenApiOperationObject = {
  operationId: 'toolCallHook',
  summary:
    "A model agent's tool call, POSTed to the tool's url in the agent's spec (README, An agent without a server)",
  description:
    "Sent once, signed like the turn hook, when the agent's model calls the tool with arguments that match its `parameters`. Answer within the tool's `timeout_ms` (default 10000) with a 2xx and a JSON body: it is given to the model as the tool's result (at most 16 KiB). Anything else is told to the model as the tool's failure, and the model answers the visitor without it.",
  tags: ['Webhooks'],
  requestParams: { header: headersOf({ 'X-Service-Delivery': 'The call id' }) },
  requestBody: { required: true, content: { 'application/json': { schema: toolCallBody } } },
  responses: {
    '200': { description: "The tool's result: any JSON, given to the model" },
    '500': { description: 'The tool failed: the model is told so (so is any status but 2xx, or no answer in time)' },
  },
};

function transcriptHook(type: (typeof transcriptEventTypes)[number]): ZodOpenApiOperationObject {
  return {
    operationId: `transcript_${type.replace('.', '_')}`,
    summary: `Transcript event \`${type}\`, POSTed to the deployment's channel_config.transcript_hook_url`,
    description:
      'At least once, in order per conversation, from a durable outbox. Any 2xx counts as delivered; anything else (a 3xx included: redirects are not followed) is retried with exponential backoff from 1 s, doubling to at most 1 h (±20%), for 72 h, honouring `Retry-After` on 429 and 503. A 410 Gone disables the target at once (and 72 h of failures does too): events wait, in order, until POST /api/v1/deployments/{id}/transcript-hook/enable. Each attempt is recorded in `GET /api/v1/deliveries` and can be sent again with `POST /api/v1/deliveries/{id}/redeliver`.',
    tags: ['Webhooks'],
    requestParams: { header: headersOf({ 'X-Service-Event-Id': 'The event id: the same on every retry' }) },
    requestBody: { required: true, content: { 'application/json': { schema: transcriptEventBodies[type] } } },
    responses: {
      '200': { description: 'Delivered (any 2xx)' },
      '503': { description: 'Not delivered: retried later (any status but 2xx)' },
    },
  };
}

/** Every call the service makes to the customer's server, as OpenAPI 3.1 `webhooks`. */
export function outboundWebhooks(): ZodOpenApiPathsObject {
  const webhooks: ZodOpenApiPathsObject = { 'turn.created': { post: turnHook }, 'tool.call': { post: toolHook } };
  for (const type of transcriptEventTypes) webhooks[`transcript.${type}`] = { post: transcriptHook(type) };
  return webhooks;
}
