import type { RequestHandler } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import type { ApiKeyAuthenticator } from '../api-keys/api-key.authenticator.js';
import { UNMATCHED_ROUTE, type UsageRecorder } from '../api-keys/usage.recorder.js';
import { AppError } from '../errors.js';
import { clientAddress } from './client-address.js';

const BEARER = /^Bearer +(\S+) *$/i;

/**
 * Resolves the bearer key without refusing yet, so that the rate limiter can key on it and
 * unauthenticated callers are limited too (per address), then counts the request for usage.
 */
export function resolvePrincipal(keys: ApiKeyAuthenticator, usage: UsageRecorder): RequestHandler {
  return async (req, res, next) => {
    const match = BEARER.exec(req.headers.authorization ?? '');
    const principal = match ? await keys.authenticate(match[1]!) : null;
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
  if (!res.locals.principal) throw new AppError('unauthorized', 'A valid API key is required: Authorization: Bearer <api key>');
  next();
};

export function perKeyRateLimit(limitPerMinute: number, trustProxyHops: number): RequestHandler {
  return rateLimit({
    windowMs: 60_000,
    limit: limitPerMinute,
    standardHeaders: 'draft-6',
    legacyHeaders: false,
    keyGenerator: (req, res) => res.locals.principal?.keyId ?? `ip:${ipKeyGenerator(clientAddress(req, trustProxyHops))}`,
    handler: (_req, _res, next) => next(new AppError('rate_limited', 'Too many requests for this API key; retry after the time in Retry-After')),
  });
}
