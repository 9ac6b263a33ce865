import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { countUsage, type UsageRecorder } from './api-keys/usage.recorder.js';
import type { ActivityHub } from './concierge/activity/activity.hub.js';
import type { SessionGateway } from './concierge/sessions/session.gateway.js';
import type { Config } from './config.js';
import { type Credential, perKeyRateLimit, requirePrincipal, resolvePrincipal } from './http/auth.js';
import type { Middleware } from './http/exchange.js';
import { lastResponsePerConnection } from './http/http-server.js';
import type { PublicAddress } from './http/public-address.js';

// How the app's HTTP server admits management calls, listens and stops (README, The management API; Draining and rolling restarts).

/**
 * Who may call the management API (README, The management API): an API key or the console's
 * session, each request counted for its customer's usage and limited per caller; the unknown are
 * limited per address, then refused.
 */
export function managementAccess(
  credentials: readonly Credential[],
  usage: UsageRecorder,
  config: Pick<Config, 'rateLimitPerMinute' | 'trustProxy'>,
): Middleware[] {
  return [
    resolvePrincipal(credentials),
    countUsage(usage),
    perKeyRateLimit(config.rateLimitPerMinute, config.trustProxy),
    requirePrincipal,
  ];
}

/** Listens where configured; resolves with the URL bound. */
export async function listen(
  server: Server,
  config: Pick<Config, 'port' | 'host'>,
  address: PublicAddress,
): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  address.listening(port);
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${port}`;
}

/**
 * Stops accepting, tells every widget and activity reader to reconnect elsewhere, and waits for
 * requests in flight, for `deadlineMs` at most: then what remains is cut, so a stop always
 * finishes before a supervisor's kill (systemd's `TimeoutStopSec`).
 */
export async function closeServer(
  server: Server,
  sessions: SessionGateway,
  activity: ActivityHub,
  deadlineMs: number,
): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  lastResponsePerConnection(server);
  activity.endStreams();
  sessions.close();
  server.closeIdleConnections();
  const cut = setTimeout(() => server.closeAllConnections(), deadlineMs);
  await closed;
  clearTimeout(cut);
}
