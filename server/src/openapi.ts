import { z } from 'zod';
import {
  createDocument,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponsesObject,
} from 'zod-openapi';
import { type HttpErrorCode, errorStatus } from './errors.js';
import { envelopeOf, errorEnvelopeSchema } from './http/envelope.js';
import type { RouteDef } from './http/route.js';
import { outboundWebhooks } from './openapi-webhooks.js';
import { agentSpecDocument } from './agents/agent-spec.js';

export const CONTRACT_VERSION = '2026-10-02';

/** Errors any authenticated route can return, whatever it does (each reads the store, if only for the key). */
const AUTHENTICATED: HttpErrorCode[] = ['unauthorized', 'forbidden', 'rate_limited', 'internal_error', 'unavailable'];
const WITH_BODY: HttpErrorCode[] = ['invalid_json', 'invalid_request', 'payload_too_large', 'unsupported_media_type'];

export const toOpenApiPath = (expressPath: string): string => expressPath.replace(/:([A-Za-z_]+)/g, '{$1}');

/** POSTs under /api/v1 take an Idempotency-Key (README, The management API). */
const isIdempotent = (def: RouteDef): boolean => def.auth !== false && def.method === 'post';
const idempotencyHeader = z.object({
  'Idempotency-Key': z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x20-\x7e]+$/)
    .optional()
    .meta({
      description:
        'Makes a retry safe: the first successful response to a key is kept 24 h and sent again to a repeat of the same request',
    }),
});

function errorCodesOf(def: RouteDef): HttpErrorCode[] {
  const codes = new Set<HttpErrorCode>(def.errors ?? []);
  if (def.auth !== false) for (const c of AUTHENTICATED) codes.add(c);
  if (isIdempotent(def)) codes.add('idempotency_conflict');
  if (def.method === 'post' || def.method === 'put') for (const c of WITH_BODY) codes.add(c);
  if (def.query) codes.add('invalid_request');
  return [...codes];
}

const rateLimitHeaders = {
  'RateLimit-Limit': { description: 'Requests allowed per window', schema: { type: 'integer' as const } },
  'RateLimit-Remaining': { description: 'Requests left in this window', schema: { type: 'integer' as const } },
  'RateLimit-Reset': { description: 'Seconds until the window resets', schema: { type: 'integer' as const } },
};
const requestIdHeader = {
  'X-Request-Id': {
    description: 'Echoes a well-formed incoming id, else a new one',
    schema: { type: 'string' as const },
  },
};

function successContent(def: RouteDef) {
  if (def.success.contentType) return { [def.success.contentType]: { schema: def.success.data } };
  return {
    'application/json': {
      schema: def.success.raw ? def.success.data : envelopeOf(def.success.data, def.success.list, def.success.meta),
    },
  };
}

function operationOf(def: RouteDef): ZodOpenApiOperationObject {
  const common = def.auth === false ? requestIdHeader : { ...requestIdHeader, ...rateLimitHeaders };
  const successHeaders: Record<string, { description: string; schema: { type: 'string' | 'integer' } }> = { ...common };
  for (const [name, description] of Object.entries(def.success.headers ?? {}))
    successHeaders[name] = { description, schema: { type: 'string' } };
  if (isIdempotent(def))
    successHeaders['Idempotent-Replayed'] = {
      description: '`true` when this is the kept response to an earlier request with the same Idempotency-Key',
      schema: { type: 'string' },
    };

  const responses: ZodOpenApiResponsesObject = {
    [String(def.success.status)]: {
      description: def.success.description,
      headers: successHeaders,
      ...(def.success.empty ? {} : { content: successContent(def) }),
    },
  };
  const byStatus = new Map<number, HttpErrorCode[]>();
  for (const code of errorCodesOf(def))
    byStatus.set(errorStatus[code], [...(byStatus.get(errorStatus[code]) ?? []), code]);
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const headers: Record<string, { description: string; schema: { type: 'string' | 'integer' } }> = { ...common };
    if (status === 429 || status === 503)
      headers['Retry-After'] = { description: 'Seconds to wait', schema: { type: 'integer' } };
    if (status === 401) headers['WWW-Authenticate'] = { description: 'Bearer', schema: { type: 'string' } };
    responses[String(status) as `${4 | 5}${string}`] = {
      description: `Error: ${codes.map((c) => `\`${c}\``).join(', ')}`,
      headers,
      content: { 'application/json': { schema: errorEnvelopeSchema } },
    };
  }

  const operation: ZodOpenApiOperationObject = {
    operationId: def.operationId,
    summary: def.summary,
    tags: [def.tag],
    security: def.auth === false ? [] : [{ apiKey: [] }, { consoleSession: [] }],
    responses,
  };
  if (def.params || def.query || isIdempotent(def)) {
    operation.requestParams = {};
    if (def.params) operation.requestParams.path = def.params as z.ZodObject;
    if (def.query) operation.requestParams.query = def.query as z.ZodObject;
    if (isIdempotent(def)) operation.requestParams.header = idempotencyHeader;
  }
  if (def.body) {
    operation.requestBody = { required: !def.bodyOptional, content: { 'application/json': { schema: def.body } } };
  }
  if (def.upload) {
    const file = z.string().meta({ format: 'binary', description: def.upload.description });
    operation.requestBody!.content['multipart/form-data'] = { schema: def.upload.fields.extend({ file }) };
  }
  return operation;
}

/** The served contract, built from the same route declarations that validate requests. */
export function buildOpenApiDocument(routes: readonly RouteDef[], serverUrl?: string) {
  const paths: ZodOpenApiPathsObject = {};
  for (const def of routes) {
    const path = toOpenApiPath(def.path);
    paths[path] = { ...paths[path], [def.method]: operationOf(def) };
  }
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'Concierge service',
      version: CONTRACT_VERSION,
      description:
        'Management API for agents, deployments and the customer API key, and the concierge session interfaces.',
    },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    components: {
      schemas: { AgentSpecDocument: agentSpecDocument },
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'The customer API key (vak_...)' },
        consoleSession: {
          type: 'apiKey',
          in: 'cookie',
          name: 'concierge_session',
          description:
            "The console's session (POST /console/session); counts only with `X-Requested-With: concierge-console` and, when an Origin is sent, the service's own",
        },
      },
    },
    paths,
    webhooks: outboundWebhooks(),
  });
}
