import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';
import { sendError } from './envelope.js';

export const notFoundRoute: RequestHandler = () => {
  throw new AppError('not_found', 'No such route');
};

/** Renders every error as the contract's envelope; anything unexpected becomes a logged 500. */
export const errorHandler = (logger: Logger): ErrorRequestHandler => (err, _req, res, _next) => {
  let appError: AppError;
  if (err instanceof AppError) appError = err;
  else if (err instanceof URIError || (err?.status === 400 && /decode param/i.test(String(err.message)))) {
    // A path that does not even decode cannot name an existing resource.
    appError = new AppError('not_found', 'Resource not found');
  } else {
    logger.error({ err, request_id: res.locals.requestId }, 'unhandled error');
    appError = new AppError('internal_error', 'Internal error');
  }
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (appError.code === 'unauthorized') res.setHeader('WWW-Authenticate', 'Bearer');
  if (appError.code === 'payload_too_large') res.setHeader('Connection', 'close');
  sendError(res, appError);
};
