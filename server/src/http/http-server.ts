import { createServer, type Server } from 'node:http';
import express from 'express';
import type { Logger } from 'pino';
import type { ApiKeyAuthenticator } from '../api-keys/api-key.authenticator.js';
import type { UsageRecorder } from '../api-keys/usage.recorder.js';
import type { Config } from '../config.js';
import type { ConsoleAccounts } from '../console/console-accounts.js';
import { consoleStatic, serviceFavicon } from '../console/console-static.js';
import type { Idempotency } from '../idempotency/idempotency.js';
import { PerKeyCap } from '../shared/per-key-cap.js';
import type { StoreHealth } from '../store/store-health.js';
import { accessLog } from './access-log.js';
import { requestMetrics } from '../metrics/request-metrics.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import { perKeyRateLimit, requirePrincipal, resolvePrincipal } from './auth.js';
import { dispatchRoutes } from './dispatch.js';
import { errorHandler, notFoundRoute } from './error-handler.js';
import { noStore } from './no-store.js';
import type { PublicAddress } from './public-address.js';
import { requestId } from './request-id.js';
import type { RouteDef } from './route.js';

/** Conversation exports one customer may run at once on a node (2, README: The management API). */
const EXPORTS_PER_CUSTOMER = 2;

export interface HttpServerParts {
  routes: readonly RouteDef[];
  logger: Logger;
  health: StoreHealth;
  keys: ApiKeyAuthenticator;
  usage: UsageRecorder;
  accounts: ConsoleAccounts;
  idempotency: Idempotency;
  address: PublicAddress;
  metrics: ServiceMetrics;
}

export interface HttpServerSettings {
  config: Pick<Config, 'rateLimitPerMinute' | 'trustProxy' | 'maxConnections'>;
  /** Slow-client limits (10 s each, 30 s for a stalled export: README, Security and The management API). */
  timeouts: { headersMs: number; bodyMs: number; streamStallMs: number };
  /** Where the built console is (default `console/dist`). */
  consoleDir: string | undefined;
}

/**
 * The HTTP server: declared routes served straight from `node:http` (docs/performance.md), and
 * Express for what is not a declared route: the console's files, and every unknown path (after
 * the same middleware, so an unknown /api/v1 path still wants a key first).
 */
export function httpServer(
  parts: HttpServerParts,
  settings: HttpServerSettings,
): { server: Server; served: readonly string[] } {
  const { routes, logger, health, keys, usage, accounts, idempotency, address, metrics } = parts;
  const { config, timeouts } = settings;
  const before = [requestId, accessLog(logger), requestMetrics(metrics)];
  const under = {
    '/console': [noStore],
    '/api/v1': [
      noStore,
      resolvePrincipal(keys, usage, { accounts, address }),
      perKeyRateLimit(config.rateLimitPerMinute, config.trustProxy),
      requirePrincipal,
    ],
  };
  const onError = errorHandler(logger, health);
  const streams = { stallMs: timeouts.streamStallMs, perCustomer: new PerKeyCap(EXPORTS_PER_CUSTOMER) };
  const dispatch = dispatchRoutes(routes, {
    before,
    under,
    onError,
    bodyTimeoutMs: timeouts.bodyMs,
    idempotency,
    streams,
  });

  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.use(...before);
  for (const [prefix, chain] of Object.entries(under)) app.use(prefix, ...chain);
  app.use('/console', consoleStatic(settings.consoleDir));
  app.use('/favicon.ico', serviceFavicon(settings.consoleDir));
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
