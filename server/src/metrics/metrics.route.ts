import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { AppError } from '../errors.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import type { ServiceMetrics } from './service-metrics.js';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/**
 * `GET /metrics`: the Prometheus text format (README, Knowing how it goes), only with
 * `Authorization: Bearer $METRICS_TOKEN`. Without a token configured the route does not exist
 * (404); a missing or wrong one is 401. Tokens are compared as digests, in constant time.
 */
export function metricsRoute(metrics: ServiceMetrics, token: string | undefined): RouteDef {
  return defineRoute({
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    summary: "The service's metrics for Prometheus",
    tag: 'System',
    auth: false,
    errors: ['not_found', 'unauthorized'],
    success: { status: 200, description: 'The Prometheus text exposition format', data: z.string(), contentType: metrics.registry.contentType },
    handler: async ({ req }) => {
      if (!token) throw new AppError('not_found', 'Metrics are off: set METRICS_TOKEN');
      const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      if (!timingSafeEqual(digest(given), digest(token))) throw new AppError('unauthorized', 'Metrics need Authorization: Bearer $METRICS_TOKEN');
      return { data: await metrics.registry.metrics(), headers: { 'Cache-Control': 'no-store' } };
    },
  });
}
