import { createHash, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { AppError } from '../errors.js';
import { clientAddress, limitAddressOf, type ProxyTrust } from '../http/client-address.js';
import { defineRoute, type RouteDef } from '../http/route.js';
import { WindowCounter } from '../shared/window-counter.js';
import type { ServiceMetrics } from './service-metrics.js';

const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

/** Wrong tokens one client address may send per minute; past it each is 429 until the minute ends. */
export const METRICS_FAILURES_PER_MINUTE = 10;

/**
 * `GET /metrics`: the Prometheus text format (README, Knowing how it goes), only with
 * `Authorization: Bearer $METRICS_TOKEN`. Without a token configured the route does not exist
 * (404); a missing or wrong one is 401, and guessing is slowed per address (429). Tokens are
 * compared as digests, in constant time.
 */
export function metricsRoute(metrics: ServiceMetrics, token: string | undefined, trustProxy: ProxyTrust): RouteDef {
  const failures = new WindowCounter(METRICS_FAILURES_PER_MINUTE);
  return defineRoute({
    method: 'get',
    path: '/metrics',
    operationId: 'metrics',
    summary: "The service's metrics for Prometheus",
    tag: 'System',
    auth: false,
    errors: ['not_found', 'unauthorized', 'rate_limited'],
    success: {
      status: 200,
      description: 'The Prometheus text exposition format',
      data: z.string(),
      contentType: metrics.registry.contentType,
    },
    handler: async ({ req }) => {
      if (!token) throw new AppError('not_found', 'Metrics are off: set METRICS_TOKEN');
      const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
      if (!timingSafeEqual(digest(given), digest(token))) {
        const blocked = failures.refuse(limitAddressOf(clientAddress(req, trustProxy)));
        if (blocked)
          throw new AppError(
            'rate_limited',
            `More than ${METRICS_FAILURES_PER_MINUTE} wrong metrics tokens from this address in a minute; retry after the time in Retry-After`,
            undefined,
            blocked,
          );
        throw new AppError('unauthorized', 'Metrics need Authorization: Bearer $METRICS_TOKEN');
      }
      return { data: await metrics.registry.metrics(), headers: { 'Cache-Control': 'no-store' } };
    },
  });
}
