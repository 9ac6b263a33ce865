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
  status?: number;
  ms?: number;
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

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
export function curlOf(method: string, path: string, body?: unknown, base = location.origin): string {
  const lines = [`curl -X ${method} '${base}${path}'`, `-H "Authorization: Bearer $CONCIERGE_API_KEY"`];
  if (body !== undefined) lines.push(`-H 'Content-Type: application/json'`, `-d '${JSON.stringify(body).replaceAll("'", "'\\''")}'`);
  return lines.join(' \\\n  ');
}

async function send(method: Method, path: string, body?: unknown): Promise<Response> {
  // Sign-in and welcome bodies carry a password or a token: they never enter the log.
  const kept = body !== undefined && !path.startsWith('/console/');
  const entry: Sent = { at: Date.now(), method, path, ...(kept ? { body } : {}) };
  sentLog.unshift(entry);
  sentLog.length = Math.min(sentLog.length, 50);
  const started = performance.now();
  try {
    const res = await fetch(new URL(path, location.origin), {
      method,
      credentials: 'same-origin',
      headers: { 'X-Requested-With': 'concierge-console', ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    entry.status = res.status;
    return res;
  } catch {
    entry.status = 0;
    throw new ApiError(0, 'network', 'The service could not be reached; check the connection and retry');
  } finally {
    entry.ms = Math.round(performance.now() - started);
    for (const listener of listeners) listener();
  }
}

async function failure(res: Response): Promise<ApiError> {
  const text = await res.text();
  try {
    const { error, meta } = JSON.parse(text) as { error: { code: string; message: string; details?: { path: string; message: string }[] }; meta?: { request_id?: string } };
    return new ApiError(res.status, error.code, error.message, error.details, meta?.request_id);
  } catch {
    return new ApiError(res.status, 'unexpected', `The service answered ${res.status}`);
  }
}

/** One API call: the envelope's data and meta, or an {@link ApiError}. A 401 means the session ended. */
export async function api<T, M = Record<string, unknown>>(method: Method, path: string, body?: unknown): Promise<{ data: T; meta: M }> {
  const res = await send(method, path, body);
  if (res.status === 204) return { data: undefined as T, meta: {} as M };
  if (!res.ok) {
    const error = await failure(res);
    if (res.status === 401 && path.startsWith('/api/')) onSignedOut();
    throw error;
  }
  return (await res.json()) as { data: T; meta: M };
}

export const get = <T>(path: string) => api<T>('GET', path).then((r) => r.data);
export const list = <T>(path: string) => api<T[], PageMeta>('GET', path);
export const post = <T>(path: string, body?: unknown) => api<T>('POST', path, body).then((r) => r.data);
export const put = <T>(path: string, body: unknown) => api<T, SaveMeta>('PUT', path, body);
export const del = <T>(path: string) => api<T>('DELETE', path).then((r) => r.data);

/** Text routes (the NDJSON export): the body as text. */
export async function text(path: string): Promise<string> {
  const res = await send('GET', path);
  if (!res.ok) throw await failure(res);
  return res.text();
}

/** A query string from the filters that are set. */
export function query(params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}
