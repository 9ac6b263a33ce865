import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import express, { type RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { PerKeyCap } from '../shared/per-key-cap.js';
import { accessLog } from './access-log.js';
import { dispatchRoutes } from './dispatch.js';
import { errorHandler, type KnownError, notFoundRoute } from './error-handler.js';
import type { Middleware } from './exchange.js';
import { requestId } from './request-id.js';
import type { RepeatGuard, RouteDef, ServeOptions } from './route.js';

/** Conversation exports one customer may run at once on a node (2, README: The management API). */
const EXPORTS_PER_CUSTOMER = 2;

/** What the server serves, and the rules `app.ts` sets for it: the transport knows no feature. */
export interface HttpServerParts {
  routes: readonly RouteDef[];
  logger: Logger;
  /** After the request id and the access log, on every request (request metrics). */
  observe: readonly Middleware[];
  /** Run next for everything under each prefix, declared route or not (`/api/v1`: who may call, its limit). */
  under: Readonly<Record<string, readonly Middleware[]>>;
  /** Express handlers for what is not a declared route (the console's files), by mount path. */
  mounts: Readonly<Record<string, RequestHandler>>;
  /** Errors other parts know how to answer (a store outage). */
  knownErrors: readonly KnownError[];
  /** Keeps and replays the responses of POSTs that carry an Idempotency-Key. */
  repeats: RepeatGuard;
  /** Refuses an authenticated caller a route is not open to. */
  permit: NonNullable<ServeOptions['permit']>;
}

export interface HttpServerSettings {
  config: Pick<Config, 'maxConnections'>;
  /** Slow-client limits (10 s each, 30 s for a stalled export: README, Security and The management API). */
  timeouts: { headersMs: number; bodyMs: number; streamStallMs: number };
}

/**
 * The HTTP server: declared routes served straight from `node:http` (docs/performance.md), and
 * Express for what is not a declared route: the mounted handlers, and every unknown path (after
 * the same middleware, so an unknown /api/v1 path still wants a key first).
 */
export function httpServer(
  parts: HttpServerParts,
  settings: HttpServerSettings,
): { server: Server; served: readonly string[] } {
  const { routes, logger, under, repeats, permit } = parts;
  const { config, timeouts } = settings;
  const before = [requestId, accessLog(logger), ...parts.observe];
  const onError = errorHandler(logger, parts.knownErrors);
  const streams = { stallMs: timeouts.streamStallMs, perCustomer: new PerKeyCap(EXPORTS_PER_CUSTOMER) };
  const dispatch = dispatchRoutes(routes, {
    before,
    under,
    onError,
    bodyTimeoutMs: timeouts.bodyMs,
    repeats,
    permit,
    streams,
  });

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(...before);
  for (const [prefix, chain] of Object.entries(under)) app.use(prefix, ...chain);
  for (const [path, handler] of Object.entries(parts.mounts)) app.use(path, handler);
  app.use(notFoundRoute);
  app.use(onError);

  // Slow-loris guards: headers must arrive within 10 s, a body within 10 s of them (see
  // readRawBody), and the whole request within their sum. Node checks these every second
  // (its default, 30 s, held a silent socket that long).
  const server = createServer(
    {
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.headersMs + timeouts.bodyMs,
      connectionsCheckingInterval: Math.min(1_000, timeouts.headersMs),
    },
    (req, res) => dispatch(req, res) || app(req, res),
  );
  // Past this many sockets new ones are closed at once, so an exhausted node fails fast, not slowly.
  server.maxConnections = config.maxConnections;
  return { server, served: dispatch.served };
}

/**
 * From now on every response is its connection's last (a draining or stopping node): a client that
 * asks again at once, as a reader of an ended stream does, opens a new connection, which the balancer
 * gives to a node that stays, instead of coming back over the kept-alive one until the stop's deadline.
 */
export function lastResponsePerConnection(server: Server): void {
  if (server.listeners('request').includes(closingAfter)) return;
  server.prependListener('request', closingAfter);
}

function closingAfter(_req: IncomingMessage, res: ServerResponse): void {
  res.shouldKeepAlive = false;
}
