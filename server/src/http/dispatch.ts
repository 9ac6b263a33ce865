import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { match } from 'path-to-regexp';
import type { ErrorMiddleware, Middleware, Next, RouteRequest, RouteResponse } from './exchange.js';
import { type RouteDef, type ServeOptions, serveRoute } from './route.js';

export interface DispatchOptions extends ServeOptions {
  /** Run first for every route, in order (the request id, the access log). */
  before: readonly Middleware[];
  /** Run next for the routes under each prefix (`/api/v1`: cache policy, key, rate limit). */
  under: Readonly<Record<string, readonly Middleware[]>>;
  onError: ErrorMiddleware;
}

interface Entry {
  def: RouteDef;
  method: string;
  /** The path's fixed start, lower-cased: most requests are told apart by it before any pattern runs. */
  prefix: string;
  match: (path: string) => false | { params: Partial<Record<string, string | string[]>> };
  chain: Middleware[];
}

export interface Dispatcher {
  /** Serves the request when it is one of the routes, and says whether it did. */
  (req: IncomingMessage, res: ServerResponse): boolean;
  /** What it serves, as `method path` (for the OpenAPI check). */
  readonly served: readonly string[];
}

/**
 * The declared routes, served straight from node:http: Express's app and router cost a list
 * request about as much as the rest of the service did (`npm run bench -- management` with
 * BENCH_CPU_PROF). Matching is Express's own (path-to-regexp, case-insensitive, an optional
 * trailing slash, parameters percent-decoded), and the same middleware runs, so a route answers
 * exactly as it did. Everything else (the console's files, unknown paths) is left to Express.
 */
export function dispatchRoutes(routes: readonly RouteDef[], options: DispatchOptions): Dispatcher {
  const entries: Entry[] = routes.map((def) => ({
    def,
    method: def.method.toUpperCase(),
    prefix: def.path.split(':', 1)[0]!.toLowerCase(),
    match: match(def.path, { decode: decodeURIComponent, end: true, sensitive: false, trailing: true }),
    chain: [
      ...options.before,
      ...Object.entries(options.under).flatMap(([prefix, chain]) => (isUnder(def.path, prefix) ? chain : [])),
      serving(serveRoute(def, options)),
    ],
  }));

  // Each request looks only at its method's routes: a reply is one POST among many GETs.
  const byMethod = new Map<string, Entry[]>();
  for (const entry of entries) {
    if (!byMethod.has(entry.method)) byMethod.set(entry.method, []);
    byMethod.get(entry.method)!.push(entry);
  }

  const dispatch = (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = req.url ?? '';
    // Only origin-form targets; anything odder is Express's to judge (and refuse).
    if (url[0] !== '/') return false;
    const queryAt = url.indexOf('?');
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    const lower = path.toLowerCase();
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    for (const entry of byMethod.get(method ?? '') ?? []) {
      if (!lower.startsWith(entry.prefix)) continue;
      let found: ReturnType<Entry['match']>;
      let undecodable: unknown;
      try {
        found = entry.match(path);
      } catch (err) {
        // A parameter that is not valid percent-encoding: the route's, but it names nothing.
        found = { params: {} };
        undecodable = err;
      }
      if (!found) continue;
      const request = req as RouteRequest;
      request.params = found.params as Record<string, string>;
      request.query = queryAt < 0 ? {} : { ...parseQuery(url.slice(queryAt + 1)) };
      request.originalUrl = url;
      request.route = { path: entry.def.path };
      (res as RouteResponse).locals = {};
      run(
        undecodable === undefined
          ? entry.chain
          : [
              ...options.before,
              () => {
                throw undecodable;
              },
            ],
        request,
        res as RouteResponse,
        options.onError,
      );
      return true;
    }
    return false;
  };
  return Object.assign(dispatch, { served: entries.map((e) => `${e.def.method} ${e.def.path}`) });
}

const isUnder = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

/** The route itself, last in its chain: it answers, or its error goes where a middleware's would. */
const serving =
  (serve: (req: RouteRequest, res: RouteResponse) => Promise<void>): Middleware =>
  (req, res) =>
    serve(req, res);

/** Runs `chain` as Express would: each step calls `next` to go on, or throws (or rejects) to answer with an error. */
function run(chain: readonly Middleware[], req: RouteRequest, res: RouteResponse, onError: ErrorMiddleware): void {
  let at = 0;
  const fail = (err: unknown) => {
    try {
      onError(err, req, res, () => {});
    } catch {
      res.destroy();
    }
  };
  const next: Next = (err) => {
    if (err !== undefined) return fail(err);
    const step = chain[at++];
    if (!step) return;
    try {
      const result = step(req, res, next);
      if (result instanceof Promise) result.catch(fail);
    } catch (thrown) {
      fail(thrown);
    }
  };
  next();
}
