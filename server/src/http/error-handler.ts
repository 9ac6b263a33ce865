import { type ErrorMiddleware, type Middleware, pathOf } from './exchange.js';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import { isStoreUnavailable, type StoreHealth } from '../store/store-health.js';
import { sendError } from './envelope.js';

export const notFoundRoute: Middleware = () => {
  throw new AppError('not_found', 'No such route');
};

/**
 * Renders every error as the envelope README, The management API describes. A store that cannot be reached is a 503 the
 * client may retry (reported to `health`, which logs an outage once, not once per request);
 * anything else unexpected becomes a logged 500.
 */
export const errorHandler =
  (logger: Logger, health: StoreHealth): ErrorMiddleware =>
  (err, req, res, _next) => {
    let appError: AppError;
    if (err instanceof AppError) appError = err;
    else if (isStoreUnavailable(err)) {
      health.failed(err, `${req.method} ${pathOf(req)}`);
      appError = new AppError(
        'unavailable',
        'The store cannot be reached right now; nothing was changed. Retry shortly.',
      );
    } else if (err instanceof URIError) {
      // A path parameter that does not even decode (see dispatch.ts) cannot name an existing resource.
      appError = new AppError('not_found', 'Resource not found');
    } else {
      logger.error({ err, request_id: res.locals.requestId }, 'unhandled error');
      appError = new AppError('internal_error', 'Internal error');
    }
    if (res.headersSent || req.socket.destroyed) {
      res.destroy();
      return;
    }
    if (appError.code === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer');
    if (appError.code === 'payload_too_large') res.setHeader('Connection', 'close');
    if (appError.code === 'unavailable') res.setHeader('Retry-After', '1');
    if (appError.retryAfterS !== undefined) res.setHeader('Retry-After', String(appError.retryAfterS));
    sendError(res, appError);
  };
