import type { Logger } from 'pino';
import { type Middleware, pathOf, type RouteRequest } from './exchange.js';

/**
 * One line per request: id, method, route, the names of its query parameters, status, duration.
 * The route is its declared template (`/api/v1/agents/:id`), or the path where no route matched
 * (the console's files, unknown paths). No values from the URL, headers or bodies: keys, tokens
 * and secrets have no way in, and neither have a visitor's words (a search term is one). (pino-http
 * was measured at ~20% of a list request's CPU, for a per-request child logger we do not need.)
 */
export function accessLog(logger: Logger): Middleware {
  return (req, res, next) => {
    if (logger.isLevelEnabled('info')) {
      const started = performance.now();
      res.on('finish', () => {
        const ms = Math.round((performance.now() - started) * 10) / 10;
        const line = {
          request_id: res.locals.requestId,
          method: req.method,
          ...where(req),
          ...queryNames(req.originalUrl),
          status: res.statusCode,
          ms,
        };
        // A 503 is the store's outage, logged once where it is noticed; a request that met it is no error of ours.
        if (res.statusCode >= 500 && res.statusCode !== 503) logger.error(line, 'request failed');
        else logger.info(line, 'request');
      });
    }
    next();
  };
}

const where = (req: RouteRequest): { route: string } | { path: string } =>
  req.route ? { route: String(req.route.path) } : { path: pathOf(req) };

/** The query's parameter names, each once, in order of first use; nothing without a query. */
function queryNames(url: string): { query?: string[] } {
  const at = url.indexOf('?');
  return at < 0 ? {} : { query: [...new Set(new URLSearchParams(url.slice(at + 1)).keys())] };
}
