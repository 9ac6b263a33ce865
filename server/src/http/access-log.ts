import type { Middleware } from './exchange.js';
import type { Logger } from 'pino';

/**
 * One line per request: id, method, path, status, duration. No headers or bodies, so keys,
 * tokens and secrets have no way in. (pino-http was measured at ~20% of a list request's CPU,
 * even with its lines filtered out by level, for a per-request child logger we do not need.)
 */
export function accessLog(logger: Logger): Middleware {
  return (req, res, next) => {
    if (logger.isLevelEnabled('info')) {
      const started = performance.now();
      res.on('finish', () => {
        const ms = Math.round((performance.now() - started) * 10) / 10;
        const line = { request_id: res.locals.requestId, method: req.method, url: req.originalUrl, status: res.statusCode, ms };
        // A 503 is the store's outage, logged once where it is noticed; a request that met it is no error of ours.
        if (res.statusCode >= 500 && res.statusCode !== 503) logger.error(line, 'request failed');
        else logger.info(line, 'request');
      });
    }
    next();
  };
}
