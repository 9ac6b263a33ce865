import { type ErrorMiddleware, type Middleware, pathOf } from './exchange.js';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import { sendError } from './envelope.js';

/**
 * How a part of the service answers an error it knows (the store's outage is a 503 to retry):
 * its answer, or undefined when the error is not its own. `where` says what the request was.
 */
export type KnownError = (err: unknown, where: string) => AppError | undefined;

export const notFoundRoute: Middleware = () => {
  throw new AppError('not_found', 'No such route');
};

/**
 * Renders every error as the envelope README, The management API describes: an error another part
 * knows is answered as it says (`known`); anything else unexpected becomes a logged 500.
 */
export const errorHandler =
  (logger: Logger, known: readonly KnownError[] = []): ErrorMiddleware =>
  (err, req, res, _next) => {
    const appError =
      err instanceof AppError
        ? err
        : (answerKnown(known, err, `${req.method} ${pathOf(req)}`) ?? unexpected(err, logger, res.locals.requestId));
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

function answerKnown(known: readonly KnownError[], err: unknown, where: string): AppError | undefined {
  for (const answer of known) {
    const answered = answer(err, where);
    if (answered) return answered;
  }
  return undefined;
}

function unexpected(err: unknown, logger: Logger, requestId: string | undefined): AppError {
  // A path parameter that does not even decode (see dispatch.ts) cannot name an existing resource.
  if (err instanceof URIError) return new AppError('not_found', 'Resource not found');
  logger.error({ err, request_id: requestId }, 'unhandled error');
  return new AppError('internal_error', 'Internal error');
}
