import { type Middleware, routeLabelOf } from '../http/exchange.js';
import type { ServiceMetrics } from './service-metrics.js';

/** Each request once it finishes, by its route's label (routeLabelOf). */
export function requestMetrics(metrics: ServiceMetrics): Middleware {
  return (req, res, next) => {
    const started = performance.now();
    res.on('finish', () =>
      metrics.request(routeLabelOf(req), req.method ?? '', res.statusCode, (performance.now() - started) / 1000),
    );
    next();
  };
}
