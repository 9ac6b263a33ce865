import { AppError } from '../errors.js';
import { WindowCounter } from '../shared/window-counter.js';
import { clientAddress, limitAddressOf, type ProxyTrust } from './client-address.js';
import type { Middleware, RouteRequest } from './exchange.js';
import { type Principal, principalKey } from './principal.js';

/**
 * One way a caller proves who it is (an API key, the console's session), built outside the
 * transport and handed to it by `app.ts`.
 */
export interface Credential {
  /** Whether the request carries this kind of credential: the first kind it carries decides. */
  carried(req: RouteRequest): boolean;
  /** Who the request speaks for, or null when the credential is not (or no longer) good. */
  identify(req: RouteRequest): Promise<Principal | null>;
  /** Whether the credential still holds, asked again by responses that outlive a request. */
  holds(req: RouteRequest): Promise<boolean>;
}

const carriedBy = (credentials: readonly Credential[], req: RouteRequest) =>
  credentials.find((credential) => credential.carried(req));

/**
 * Resolves the caller's credential without refusing yet, so that the rate limiter can key on it
 * and unauthenticated callers are limited too (per address).
 */
export function resolvePrincipal(credentials: readonly Credential[]): Middleware {
  return async (req, res, next) => {
    const principal = await carriedBy(credentials, req)?.identify(req);
    if (principal) res.locals.principal = principal;
    next();
  };
}

/**
 * Whether the credential a request came with still holds, asked again by responses that outlive
 * a request (the activity stream): a revoked key or a signed-out session ends them.
 */
export function credentialCheck(credentials: readonly Credential[]): (req: RouteRequest) => Promise<boolean> {
  return async (req) => (await carriedBy(credentials, req)?.holds(req)) ?? false;
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
