import { UNMATCHED_ROUTE } from '../api-keys/usage.recorder.js';
import type { Middleware } from '../http/exchange.js';
import type { ServiceMetrics } from './service-metrics.js';

/** Each request once it finishes, by its route's template: a path no route matched counts as one label, so no URL can add one. */
export function requestMetrics(metrics: ServiceMetrics): Middleware {
  return (req, res, next) => {
    const started = performance.now();
    res.on('finish', () =>
      metrics.request(
        req.route ? String(req.route.path) : UNMATCHED_ROUTE,
        req.method ?? '',
        res.statusCode,
        (performance.now() - started) / 1000,
      ),
    );
    next();
  };
}
