import type { Request, RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import type { ApiKeyAuthenticator } from '../api-keys/api-key.authenticator.js';
import type { Principal } from '../api-keys/api-key.service.js';
import { UNMATCHED_ROUTE, type UsageRecorder } from '../api-keys/usage.recorder.js';
import type { ConsoleAccounts } from '../console/console-accounts.js';
import { AppError } from '../errors.js';
import { clientAddress } from './client-address.js';
import { CONSOLE_HEADER, ownOrigin, readCookie, SESSION_COOKIE } from './console-cookie.js';

const BEARER = /^Bearer +(\S+) *$/i;

export interface ConsoleSessions {
  accounts: ConsoleAccounts;
  publicBaseUrl: string | undefined;
}

/**
 * The console's session cookie stands in for a key only on a request the console itself made:
 * with its header, and from the service's own origin when the browser says where it comes from.
 * Anything else is as if there were no cookie.
 */
async function consolePrincipal(req: Request, sessions: ConsoleSessions): Promise<Principal | null> {
  const token = readCookie(req, SESSION_COOKIE);
  if (!token || req.headers[CONSOLE_HEADER.name] !== CONSOLE_HEADER.value) return null;
  if (req.headers.origin !== undefined && req.headers.origin !== ownOrigin(req, sessions.publicBaseUrl)) return null;
  const who = await sessions.accounts.identify(token);
  return who && { customerId: who.customerId, keyId: null, userId: who.userId };
}

/**
 * Resolves the bearer key (or the console's session) without refusing yet, so that the rate
 * limiter can key on it and unauthenticated callers are limited too (per address), then counts
 * the request for usage.
 */
export function resolvePrincipal(keys: ApiKeyAuthenticator, usage: UsageRecorder, sessions: ConsoleSessions): RequestHandler {
  return async (req, res, next) => {
    const match = BEARER.exec(req.headers.authorization ?? '');
    const principal = match ? await keys.authenticate(match[1]!) : await consolePrincipal(req, sessions);
    if (principal) {
      res.locals.principal = principal;
      res.on('finish', () => {
        const route = req.route ? String(req.route.path) : UNMATCHED_ROUTE;
        usage.record(principal.customerId, principal.keyId, req.method, route, res.statusCode >= 400, new Date());
      });
    }
    next();
  };
}

export const requirePrincipal: RequestHandler = (_req, res, next) => {
  if (!res.locals.principal) throw new AppError('unauthorized', 'A valid API key is required: Authorization: Bearer <api key> (or a console session)');
  next();
};

export function perKeyRateLimit(limitPerMinute: number, trustProxyHops: number): RequestHandler {
  return rateLimit({
    windowMs: 60_000,
    limit: limitPerMinute,
    standardHeaders: 'draft-6',
    legacyHeaders: false,
    keyGenerator: (req, res) => limitKeyOf(res.locals.principal) ?? `ip:${ipKeyGenerator(clientAddress(req, trustProxyHops))}`,
    handler: (_req, _res, next) => next(new AppError('rate_limited', 'Too many requests for this API key; retry after the time in Retry-After')),
  });
}

/** A key's requests share its limit; a console user's share theirs. */
function limitKeyOf(principal: Principal | undefined): string | undefined {
  if (!principal) return undefined;
  return principal.keyId ?? `user:${principal.userId}`;
}
