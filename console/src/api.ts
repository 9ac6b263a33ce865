import type { PageMeta, SaveMeta } from './types';

/** An error as the API reports it: its status, `code`, message and details, never swallowed. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: { path: string; message: string }[] = [],
    readonly requestId?: string,
  ) {
    super(message);
  }
}

export interface Sent {
  at: number;
  method: string;
  path: string;
  body?: unknown;
  /** An upload's file name (its bytes are not kept): `-F file=@name` in its curl. */
  file?: string;
  status?: number;
  ms?: number;
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

const ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Whether a value read from the address (a route segment) is an id the service could have made. */
export const isId = (value: string | undefined): value is string => value !== undefined && ID.test(value);

declare const builtPath: unique symbol;
/** A path made by {@link path}: the only kind of path a request is sent to. */
export type ApiPath = string & { readonly [builtPath]: true };
/** A query string made by {@link query} (`?a=1&b=2`, or empty when no filter is set). */
export class Query {
  constructor(readonly text: string) {}
}

/**
 * The one way the console names a route: `path\`/api/v1/agents/${id}/publish\``. Every value put in
 * is an id (checked, then encoded) or, last, a {@link query}; anything else throws before a request
 * leaves. A route segment read from the address bar (`#/try/..%2Fsettings...`) can therefore never
 * turn into `../` or `?` that `new URL` would resolve into another route.
 */
export function path(strings: TemplateStringsArray, ...values: (string | Query)[]): ApiPath {
  let out = strings[0]!;
  values.forEach((value, i) => {
    if (value instanceof Query && i === values.length - 1 && strings[i + 1] === '') out += value.text;
    else if (typeof value === 'string' && isId(value)) out += encodeURIComponent(value);
    else throw new ApiError(0, 'invalid_id', `Not an id: ${JSON.stringify(String(value).slice(0, 60))}`);
    out += strings[i + 1]!;
  });
  return out as ApiPath;
}

const listeners = new Set<() => void>();
/** The requests this tab made, newest first (at most 50): each can be shown as a curl command. */
export const sentLog: Sent[] = [];
/** Called when the session is gone, so the app can ask to sign in again. */
let onSignedOut: () => void = () => {};

export const onLogChange = (listener: () => void): (() => void) => {
  listeners.add(listener);
  return () => listeners.delete(listener);
};
export const whenSignedOut = (handler: () => void): void => {
  onSignedOut = handler;
};

/**
 * The request as a curl command against this service, with the key as a placeholder: the
 * console's own cookie never appears in it.
 */
export function curlOf(method: string, path: string, body?: unknown, base = location.origin, file?: string): string {
  const lines = [`curl -X ${method} '${base}${path}'`, `-H "Authorization: Bearer $CONCIERGE_API_KEY"`];
  if (file !== undefined) lines.push(`-F 'file=@${file.replaceAll("'", "'\\''")}'`);
  else if (body !== undefined)
    lines.push(`-H 'Content-Type: application/json'`, `-d '${JSON.stringify(body).replaceAll("'", "'\\''")}'`);
  return lines.join(' \\\n  ');
}

async function send(method: Method, to: ApiPath, body?: unknown): Promise<Response> {
  // Sign-in and welcome bodies carry a password or a token: they never enter the log.
  const kept = body !== undefined && !to.startsWith('/console/') && !(body instanceof FormData);
  const upload = body instanceof FormData ? (body.get('file') as File | null) : null;
  const entry: Sent = {
    at: Date.now(),
    method,
    path: to,
    ...(kept ? { body } : {}),
    ...(upload ? { file: upload.name } : {}),
  };
  sentLog.unshift(entry);
  sentLog.length = Math.min(sentLog.length, 50);
  const started = performance.now();
  try {
    const url = new URL(to, location.origin);
    // A path that resolves to another one (dot segments) is not sent: the route it names is not the one written.
    if (url.pathname + url.search !== to) throw new ApiError(0, 'invalid_id', `Not a route of this service: ${to}`);
    const res = await fetch(url, {
      method,
      credentials: 'same-origin',
      // A form's media type (with its boundary) is the browser's to write.
      headers: {
        'X-Requested-With': 'concierge-console',
        ...(body !== undefined && !upload ? { 'Content-Type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: upload ? (body as FormData) : JSON.stringify(body) } : {}),
    });
    entry.status = res.status;
    return res;
  } catch (err) {
    entry.status = 0;
    if (err instanceof ApiError) throw err;
    throw new ApiError(0, 'network', 'The service could not be reached; check the connection and retry');
  } finally {
    entry.ms = Math.round(performance.now() - started);
    for (const listener of listeners) listener();
  }
}

async function failure(res: Response): Promise<ApiError> {
  const text = await res.text();
  try {
    const { error, meta } = JSON.parse(text) as {
      error: { code: string; message: string; details?: { path: string; message: string }[] };
      meta?: { request_id?: string };
    };
    return new ApiError(res.status, error.code, error.message, error.details, meta?.request_id);
  } catch {
    return new ApiError(res.status, 'unexpected', `The service answered ${res.status}`);
  }
}

/** One API call: the envelope's data and meta, or an {@link ApiError}. A 401 means the session ended. */
export async function api<T, M = Record<string, unknown>>(
  method: Method,
  to: ApiPath,
  body?: unknown,
): Promise<{ data: T; meta: M }> {
  const res = await send(method, to, body);
  if (res.status === 204) return { data: undefined as T, meta: {} as M };
  if (!res.ok) {
    const error = await failure(res);
    if (res.status === 401 && to.startsWith('/api/')) onSignedOut();
    throw error;
  }
  return (await res.json()) as { data: T; meta: M };
}

export const get = <T>(to: ApiPath) => api<T>('GET', to).then((r) => r.data);
export const list = <T>(to: ApiPath) => api<T[], PageMeta>('GET', to);
export const post = <T>(to: ApiPath, body?: unknown) => api<T>('POST', to, body).then((r) => r.data);
export const put = <T>(to: ApiPath, body: unknown) => api<T, SaveMeta>('PUT', to, body);
export const del = <T>(to: ApiPath) => api<T>('DELETE', to).then((r) => r.data);

/** A route that answers with a file (the agent's voice sample): its bytes. */
export async function file(to: ApiPath, body?: unknown): Promise<Blob> {
  const res = await send('POST', to, body);
  if (!res.ok) throw await failure(res);
  return res.blob();
}

/** Text routes (the NDJSON export): the body as text. */
export async function text(to: ApiPath): Promise<string> {
  const res = await send('GET', to);
  if (!res.ok) throw await failure(res);
  return res.text();
}

/** A query string from the filters that are set. */
export function query(params: Record<string, string | number | boolean | undefined>): Query {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return new Query(s ? `?${s}` : '');
}
