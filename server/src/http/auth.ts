import type { ApiKeyAuthenticator } from '../api-keys/api-key.authenticator.js';
import { type Principal, principalKey } from '../api-keys/api-key.service.js';
import { UNMATCHED_ROUTE, type UsageRecorder } from '../api-keys/usage.recorder.js';
import type { ConsoleAccounts } from '../console/console-accounts.js';
import { AppError } from '../errors.js';
import { WindowCounter } from '../shared/window-counter.js';
import { clientAddress, limitAddressOf, type ProxyTrust } from './client-address.js';
import { CONSOLE_HEADER, readCookie, SESSION_COOKIE } from './console-cookie.js';
import type { Middleware, RouteRequest } from './exchange.js';
import type { PublicAddress } from './public-address.js';

const BEARER = /^Bearer +(\S+) *$/i;

export interface ConsoleSessions {
  accounts: ConsoleAccounts;
  address: PublicAddress;
}

/**
 * GETs an EventSource makes, which cannot carry the console's header: their cookie counts without
 * it (a read, SameSite=Strict, and the origin rule below still applies).
 */
const EVENT_STREAMS = new Set(['/api/v1/activity']);

/**
 * The console's session cookie stands in for a key only on a request the console itself made:
 * with its header, and from the service's own origin when the browser says where it comes from.
 * Anything else is as if there were no cookie.
 */
async function consolePrincipal(req: RouteRequest, sessions: ConsoleSessions): Promise<Principal | null> {
  const token = readCookie(req, SESSION_COOKIE);
  if (!token) return null;
  const eventStream = req.method === 'GET' && EVENT_STREAMS.has((req.url ?? '').split('?', 1)[0]!);
  if (!eventStream && req.headers[CONSOLE_HEADER.name] !== CONSOLE_HEADER.value) return null;
  if (req.headers.origin !== undefined && req.headers.origin !== sessions.address.originFor(req)) return null;
  const who = await sessions.accounts.identify(token);
  return who && { customerId: who.customerId, keyId: null, userId: who.userId };
}

/**
 * Resolves the bearer key (or the console's session) without refusing yet, so that the rate
 * limiter can key on it and unauthenticated callers are limited too (per address), then counts
 * the request for usage.
 */
export function resolvePrincipal(
  keys: ApiKeyAuthenticator,
  usage: UsageRecorder,
  sessions: ConsoleSessions,
): Middleware {
  return async (req, res, next) => {
    const match = BEARER.exec(req.headers.authorization ?? '');
    const principal = match ? await keys.authenticate(match[1]!) : await consolePrincipal(req, sessions);
    if (principal) {
      res.locals.principal = principal;
      res.on('finish', () => {
        const route = req.route ? String(req.route.path) : UNMATCHED_ROUTE;
        usage.record(principal.customerId, principal.keyId, req.method ?? '', route, res.statusCode >= 400, new Date());
      });
    }
    next();
  };
}

/**
 * Whether the key or console session a request came with still holds, asked again by responses
 * that outlive a request (the activity stream): a revoked key or a signed-out session ends them.
 */
export function credentialCheck(
  keys: ApiKeyAuthenticator,
  accounts: ConsoleAccounts,
): (req: RouteRequest) => Promise<boolean> {
  return async (req) => {
    const match = BEARER.exec(req.headers.authorization ?? '');
    if (match) return (await keys.authenticate(match[1]!)) !== null;
    const token = readCookie(req, SESSION_COOKIE);
    return token !== undefined && (await accounts.holds(token));
  };
}

export const requirePrincipal: Middleware = (_req, res, next) => {
  if (!res.locals.principal)
    throw new AppError(
      'unauthorized',
      'A valid API key is required: Authorization: Bearer <api key> (or a console session)',
    );
  next();
};

/**
 * The management limit (RATE_LIMIT_PER_MINUTE): each key's requests counted in a window of a
 * minute from its first, with the IETF draft's RateLimit-* headers on every answer; unknown
 * callers are counted per client address.
 */
export function perKeyRateLimit(limitPerMinute: number, trustProxy: ProxyTrust): Middleware {
  const windows = new WindowCounter(limitPerMinute);
  return (req, res, next) => {
    const now = Date.now();
    const key = limitKeyOf(res.locals.principal) ?? `ip:${limitAddressOf(clientAddress(req, trustProxy))}`;
    const { count, endsAt } = windows.record(key, now);
    const resetS = Math.max(1, Math.ceil((endsAt - now) / 1000));
    res.setHeader('RateLimit-Policy', `${limitPerMinute};w=${windows.windowMs / 1000}`);
    res.setHeader('RateLimit-Limit', String(limitPerMinute));
    res.setHeader('RateLimit-Remaining', String(Math.max(0, limitPerMinute - count)));
    res.setHeader('RateLimit-Reset', String(resetS));
    if (count > limitPerMinute)
      throw new AppError(
        'rate_limited',
        'Too many requests for this API key; retry after the time in Retry-After',
        undefined,
        resetS,
      );
    next();
  };
}

/** A key's requests share its limit; a console user's share theirs. */
function limitKeyOf(principal: Principal | undefined): string | undefined {
  if (!principal) return undefined;
  return principalKey(principal);
}
