import type { Express, Request, Response } from 'express';
import { z } from 'zod';
import type { Principal } from '../api-keys/api-key.service.js';
import { AppError, type ErrorCode, type ErrorDetail } from '../errors.js';
import { sendSuccess } from './envelope.js';
import { assertCleanInput, BODY_TIMEOUT_MS, hasBody, isJsonContentType, MiB, parseJson, readRawBody } from './raw-body.js';

export type Method = 'get' | 'post' | 'put' | 'delete';

const NO_BODY = z.strictObject({});

export interface RouteContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** The body's bytes, on `rawBody` routes only. */
  raw: Buffer | undefined;
  /** Set on every `/api/v1` route; the auth middleware has already refused anything else. */
  principal: Principal;
  req: Request;
  res: Response;
}

export interface RouteResult {
  status?: number;
  data: unknown;
  meta?: object;
  headers?: Record<string, string>;
}

/**
 * One declaration per route: it validates requests, types the handler and generates the
 * OpenAPI operation, so the served contract cannot drift from what the code accepts.
 */
export interface RouteDef<P extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType> {
  method: Method;
  /** Express pattern; `:name` segments become `{name}` in OpenAPI. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /** Default true: `Authorization: Bearer <api key>` and the per-key rate limit. */
  auth?: boolean;
  params?: P;
  query?: Q;
  body?: B;
  /** A missing body is read as `{}` (so its defaults apply) instead of failing validation. */
  bodyOptional?: boolean;
  /**
   * The handler gets the body's exact bytes (`raw`) and validates `body` itself, after checks
   * that must come first (a signature over those bytes). Size and media type are still checked here.
   */
  rawBody?: { limit: number };
  success: {
    status: number;
    description: string;
    data: z.ZodType;
    list?: boolean;
    headers?: Record<string, string>;
    /** Sent as is, without the envelope (the OpenAPI document itself). */
    raw?: boolean;
    /** Not JSON: the handler's `data` (text or bytes) is sent as is with this media type. */
    contentType?: string;
  };
  /** Codes this route returns beyond the ones every authenticated route can return. */
  errors?: ErrorCode[];
  handler(ctx: RouteContext<z.output<P>, z.output<Q>, z.output<B>>): Promise<RouteResult> | RouteResult;
}

/** Identity helper: lets TypeScript infer the handler's input types from the schemas. */
export function defineRoute<P extends z.ZodType = z.ZodType, Q extends z.ZodType = z.ZodType, B extends z.ZodType = z.ZodType>(
  def: RouteDef<P, Q, B>,
): RouteDef {
  return def as unknown as RouteDef;
}

function detailsOf(error: z.ZodError, root: string): ErrorDetail[] {
  return error.issues.map((issue) => ({
    path: issue.path.length ? issue.path.map(String).join('.') : root,
    message: issue.message,
  }));
}

export function validate<T extends z.ZodType>(schema: T, value: unknown, root: string): z.output<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new AppError('invalid_request', `Invalid ${root}`, detailsOf(parsed.error, root));
  return parsed.data;
}

async function readJsonBody(req: Request, limit: number, timeoutMs: number): Promise<unknown> {
  if (!hasBody(req)) return undefined;
  if (!isJsonContentType(req)) {
    throw new AppError('unsupported_media_type', 'Request body must be application/json');
  }
  return parseJson(await readRawBody(req, limit, timeoutMs));
}

export interface MountOptions {
  bodyLimit?: number;
  /** How long a body may take once the headers are in (contract: 10 s). */
  bodyTimeoutMs?: number;
}

export function mountRoutes(app: Express, routes: readonly RouteDef[], options: MountOptions = {}): void {
  const bodyLimit = options.bodyLimit ?? MiB;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? BODY_TIMEOUT_MS;
  for (const def of routes) {
    app[def.method](def.path, async (req, res) => {
      let raw: Buffer | undefined;
      if (def.rawBody) {
        // Size, then media type, before anything else looks at the request: the contract's order.
        raw = await readRawBody(req, def.rawBody.limit, bodyTimeoutMs);
        if (!isJsonContentType(req)) throw new AppError('unsupported_media_type', 'Request body must be application/json');
      }
      let params: unknown = req.params;
      if (def.params) {
        // A malformed id is reported exactly like an unknown one: 404, nothing else leaks.
        const parsed = def.params.safeParse(req.params);
        if (!parsed.success) throw new AppError('not_found', 'Resource not found');
        params = parsed.data;
      }
      assertCleanInput(req.query, 'query');
      const query = def.query ? validate(def.query, req.query, 'query') : {};
      let body: unknown;
      if (!def.rawBody && (def.method === 'post' || def.method === 'put')) {
        const parsed = await readJsonBody(req, bodyLimit, bodyTimeoutMs);
        body = validate(def.body ?? NO_BODY.optional(), parsed === undefined && def.bodyOptional ? {} : parsed, 'body');
      }
      const result = await def.handler({ params, query, body, raw, principal: res.locals.principal, req, res });
      if (result.headers) res.set(result.headers);
      if (def.success.contentType) res.status(def.success.status).type(def.success.contentType).end(result.data);
      else if (def.success.raw) res.status(def.success.status).json(result.data);
      else sendSuccess(res, result.status ?? def.success.status, result.data, result.meta);
    });
  }
}
