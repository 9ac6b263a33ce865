import { defineRoute, type RouteDef } from '../../http/route.js';
import { analyticsQuery, analyticsSchema } from './analytics.schemas.js';
import type { AnalyticsService } from './analytics.service.js';

export function analyticsRoutes(analytics: AnalyticsService): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/analytics',
      operationId: 'getAnalytics',
      summary:
        'Counts and latencies per UTC hour or day over at most 92 days (from inclusive, to exclusive), for all deployments or one deployment or agent',
      tag: 'Analytics',
      query: analyticsQuery,
      errors: ['not_found'],
      success: {
        status: 200,
        description: 'The buckets of the range, empty ones included, and its totals',
        data: analyticsSchema,
      },
      handler: async ({ principal, query }) => ({ data: await analytics.analytics(principal.customerId, query) }),
    }),
  ];
}
