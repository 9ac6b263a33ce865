import { once } from 'node:events';
import { z } from 'zod';
import type { Principal } from './principal.js';
import { AppError, type ErrorDetail, type HttpErrorCode } from '../errors.js';
import { JSON_TYPE, successBody } from './envelope.js';
import type { RouteRequest, RouteResponse } from './exchange.js';
import type { PerKeyCap } from '../shared/per-key-cap.js';
import {
  assertCleanInput,
  BODY_TIMEOUT_MS,
  hasBody,
  isJsonContentType,
  MiB,
  parseJson,
  readRawBody,
} from './raw-body.js';

export type Method = 'get' | 'post' | 'put' | 'delete';

const NO_BODY = z.strictObject({});

export interface RouteContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** The body's bytes, on `rawBody` routes only. */
  raw: Buffer | undefined;
  /** The file sent as `multipart/form-data`, on `upload` routes (its other fields are `body`). */
  file: UploadedFile | undefined;
  /** Set on every `/api/v1` route; the auth middleware has already refused anything else. */
  principal: Principal;
  req: RouteRequest;
  res: RouteResponse;
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
export interface RouteDef<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
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
  /**
   * The route also takes a file as `multipart/form-data` (field `file`), up to `limit` bytes, JSON
   * bodies too: its other fields, all text, are validated by `fields` and handed over as `body`.
   */
  upload?: { limit: number; fields: z.ZodObject; description: string };
  success: {
    status: number;
    description: string;
    data: z.ZodType;
    list?: boolean;
    /** What `meta` holds beyond the page (a list's) or the request id. */
    meta?: z.ZodType;
    headers?: Record<string, string>;
    /** Sent as is, without the envelope (the OpenAPI document itself). */
    raw?: boolean;
    /** No body at all (204). */
    empty?: boolean;
    /** Not JSON: the handler's `data` (text or bytes) is sent as is with this media type. */
    contentType?: string;
    /** With `contentType`: `data` is an async iterable of text or bytes, streamed as it comes, paced by the client's reading. */
    stream?: boolean;
    /** A stream that lasts as long as its client listens (the activity stream): not counted against the cap on exports. */
    live?: boolean;
  };
  /** Codes this route returns beyond the ones every authenticated route can return. */
  errors?: HttpErrorCode[];
  handler(ctx: RouteContext<z.output<P>, z.output<Q>, z.output<B>>): Promise<RouteResult> | RouteResult;
}

/** A file as a browser or `curl -F` sends it. */
export interface UploadedFile {
  name: string;
  /** Its media type as the sender gave it (may be empty). */
  type: string;
  bytes: Buffer;
}

function isMultipart(req: RouteRequest): boolean {
  return (req.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase() === 'multipart/form-data';
}

/** A `multipart/form-data` body: its `file`, and its text fields validated by `fields`. */
async function readUpload(
  req: RouteRequest,
  upload: NonNullable<RouteDef['upload']>,
  timeoutMs: number,
): Promise<{ raw: Buffer; file: UploadedFile; fields: unknown }> {
  const raw = await readRawBody(req, upload.limit, timeoutMs);
  let form: FormData;
  try {
    form = await new Response(Uint8Array.from(raw), {
      headers: { 'content-type': req.headers['content-type']! },
    }).formData();
  } catch {
    throw new AppError('invalid_request', 'The multipart/form-data body could not be read');
  }
  const file = form.get('file');
  if (!(file instanceof Blob))
    throw new AppError('invalid_request', 'Invalid body', [{ path: 'file', message: 'a file is required' }]);
  const fields: Record<string, string> = {};
  for (const [key, value] of form) if (key !== 'file' && typeof value === 'string') fields[key] = value;
  return {
    raw,
    file: { name: (file as File).name ?? '', type: file.type, bytes: Buffer.from(await file.arrayBuffer()) },
    fields: validate(upload.fields.strict(), fields, 'body'),
  };
}

/** Identity helper: lets TypeScript infer the handler's input types from the schemas. */
export function defineRoute<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
>(def: RouteDef<P, Q, B>): RouteDef {
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

/** The body's bytes and its JSON, or undefined when there is none. */
async function readJsonBody(
  req: RouteRequest,
  limit: number,
  timeoutMs: number,
): Promise<{ raw: Buffer; value: unknown } | undefined> {
  if (!hasBody(req)) return undefined;
  if (!isJsonContentType(req)) {
    throw new AppError('unsupported_media_type', 'Request body must be application/json');
  }
  const raw = await readRawBody(req, limit, timeoutMs);
  return { raw, value: parseJson(raw) };
}

/** A response as it is sent, and as a repeat is sent it again. */
export interface KeptResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * What makes a POST safe to repeat (README, The management API), built outside the transport: it
 * runs `respond` once for the request's key and answers every repeat as the first was answered;
 * undefined when the request asks for none of this.
 */
export interface RepeatGuard {
  guard(
    req: RouteRequest,
    customerId: string,
    body: Buffer | undefined,
    respond: () => Promise<KeptResponse>,
  ): Promise<{ response: KeptResponse; replayed: boolean }> | undefined;
}

export interface ServeOptions {
  bodyLimit?: number;
  /** How long a body may take once the headers are in (10 s, README: Security). */
  bodyTimeoutMs?: number;
  /** Refuses an authenticated caller the route is not open to (throws), before the request is read. */
  permit?: (operationId: string, principal: Principal) => void;
  /** Keeps and replays the responses of POSTs that carry an Idempotency-Key (authenticated routes). */
  repeats?: RepeatGuard;
  /** Bounds on streamed responses (the conversation export); without it they are unbounded. */
  streams?: StreamLimits;
}

/**
 * A streamed response holds a store cursor and memory for as long as its client takes: at most
 * `perCustomer` run at once for a customer (on this node), and one whose client reads nothing
 * for `stallMs` is cut (2 and 30 s, README: The management API).
 */
export interface StreamLimits {
  stallMs: number;
  perCustomer: PerKeyCap | undefined;
}

/** When a customer at its limit of streams may try again. */
const STREAM_RETRY_AFTER_S = 5;

/** Serves one declared route: validation in the order README, The management API gives, the handler, the envelope, idempotency. */
export function serveRoute(
  def: RouteDef,
  options: ServeOptions = {},
): (req: RouteRequest, res: RouteResponse) => Promise<void> {
  const bodyLimit = options.bodyLimit ?? MiB;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? BODY_TIMEOUT_MS;
  const permit = def.auth === false ? undefined : options.permit;
  return async (req, res) => {
    permit?.(def.operationId, res.locals.principal as Principal);
    let raw: Buffer | undefined;
    if (def.rawBody) {
      // Size, then media type, before anything else looks at the request: the order README, The management API gives.
      raw = await readRawBody(req, def.rawBody.limit, bodyTimeoutMs);
      if (!isJsonContentType(req))
        throw new AppError('unsupported_media_type', 'Request body must be application/json');
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
    let bodyBytes = raw;
    let file: UploadedFile | undefined;
    if (def.upload && isMultipart(req)) {
      const read = await readUpload(req, def.upload, bodyTimeoutMs);
      ({ raw: bodyBytes, file, fields: body } = read);
    } else if (!def.rawBody && (def.method === 'post' || def.method === 'put')) {
      const read = await readJsonBody(req, def.upload?.limit ?? bodyLimit, bodyTimeoutMs);
      bodyBytes = read?.raw;
      if (read === undefined && def.body && !def.bodyOptional)
        throw new AppError('invalid_request', 'Invalid body', [
          {
            path: 'body',
            message: `a JSON body is required${def.body.safeParse({}).success ? ' ({} will do)' : ''}`,
          },
        ]);
      body = validate(
        def.body ?? NO_BODY.optional(),
        read === undefined && def.bodyOptional ? {} : read?.value,
        'body',
      );
    }
    const principal = res.locals.principal as Principal;
    const context = { params, query, body, raw, file, principal, req, res };
    if (def.success.stream)
      return stream(
        res,
        def,
        () => def.handler(context),
        principal.customerId,
        def.success.live && options.streams ? { ...options.streams, perCustomer: undefined } : options.streams,
      );
    const run = async (): Promise<WireResponse> => render(def, await def.handler(context));
    // A request that failed validation keeps nothing: only what reaches the handler is idempotent.
    // POST routes answer JSON text, never bytes: what is kept is what was sent.
    const guarded =
      def.auth !== false && def.method === 'post'
        ? options.repeats?.guard(req, principal.customerId, bodyBytes, async () => {
            const wire = await run();
            return { ...wire, body: wire.body.toString() };
          })
        : undefined;
    if (!guarded) return send(res, await run());
    const { response, replayed } = await guarded;
    if (replayed) res.setHeader('Idempotent-Replayed', 'true');
    send(res, response);
  };
}

/** A response as it goes on the wire: JSON text, or bytes where a route sends a file as is. */
type WireResponse = Omit<KeptResponse, 'body'> & { body: string | Buffer };

function render(def: RouteDef, result: RouteResult): WireResponse {
  const headers: Record<string, string> = { ...result.headers };
  if (def.success.contentType)
    return {
      status: def.success.status,
      headers: { ...headers, 'Content-Type': def.success.contentType },
      body: result.data as string | Buffer,
    };
  if (def.success.empty) return { status: def.success.status, headers, body: '' };
  headers['Content-Type'] = JSON_TYPE;
  if (def.success.raw) return { status: def.success.status, headers, body: JSON.stringify(result.data) };
  return { status: result.status ?? def.success.status, headers, body: successBody(result.data, result.meta) };
}

/**
 * Sends text as it is produced, waiting for the client to drain what it was given: memory holds
 * one piece at a time. The first piece is ready before the status goes out, so a failure to
 * start (the store down) is still an ordinary error response; a later one cuts the response off,
 * and so does a client that drains nothing for `limits.stallMs`.
 */
async function stream(
  res: RouteResponse,
  def: RouteDef,
  produce: () => RouteResult | Promise<RouteResult>,
  customerId: string,
  limits: StreamLimits | undefined,
): Promise<void> {
  const cap = limits?.perCustomer;
  const release = cap ? cap.take(customerId) : () => {};
  if (!release)
    throw new AppError(
      'rate_limited',
      `At most ${cap!.limit} exports run at once; retry after the time in Retry-After`,
      undefined,
      STREAM_RETRY_AFTER_S,
    );
  try {
    const result = await produce();
    await writeStream(res, def, result, limits?.stallMs);
  } finally {
    release();
  }
}

async function writeStream(
  res: RouteResponse,
  def: RouteDef,
  result: RouteResult,
  stallMs: number | undefined,
): Promise<void> {
  const pieces = (result.data as AsyncIterable<string | Uint8Array>)[Symbol.asyncIterator]();
  let next = await pieces.next();
  res.writeHead(def.success.status, { ...result.headers, 'Content-Type': def.success.contentType! });
  const gone = new Promise<void>((resolve) => res.once('close', resolve));
  while (!next.done) {
    if (res.destroyed) return void (await pieces.return?.());
    if (!res.write(next.value) && !(await drained(res, gone, stallMs))) {
      res.destroy();
      return void (await pieces.return?.());
    }
    next = await pieces.next();
  }
  res.end();
}

/** Whether the client drained the response (or left) within `stallMs`; false when it stalled. */
async function drained(res: RouteResponse, gone: Promise<void>, stallMs: number | undefined): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const stalled =
    stallMs === undefined
      ? new Promise<never>(() => {})
      : new Promise<false>((resolve) => (timer = setTimeout(resolve, stallMs, false)));
  try {
    return await Promise.race([once(res, 'drain').then(() => true), gone.then(() => true), stalled]);
  } finally {
    clearTimeout(timer);
  }
}

function send(res: RouteResponse, response: WireResponse): void {
  res.writeHead(response.status, response.headers).end(response.body);
}
