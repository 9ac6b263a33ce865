import type { AuditTrail } from '../../audit/audit-trail.js';
import { defineRoute, type RouteDef } from '../../http/route.js';
import { idParams } from '../../shared/schemas.js';
import { deliverySchema, listDeliveriesQuery, testHookBody } from './delivery.schemas.js';
import type { DeliveryService } from './delivery.service.js';
import { deliverySeenBy } from './delivery.view.js';

export function deliveryRoutes(deliveries: DeliveryService, trail: AuditTrail): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/deliveries',
      operationId: 'listDeliveries',
      summary: 'List every call the service made to your servers (turn hook, transcript events, tests), newest first',
      tag: 'Deliveries',
      query: listDeliveriesQuery,
      success: { status: 200, description: 'A page of delivery attempts', data: deliverySchema.array(), list: true },
      handler: async ({ principal, query: { page, per_page, ...filter } }) => {
        const listed = await deliveries.list(principal.customerId, filter, { page, per_page });
        return { ...listed, data: listed.data.map(deliverySeenBy(principal.role)) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/deliveries/:id',
      operationId: 'getDelivery',
      summary: 'Get one delivery attempt: the request as sent and the answer as received',
      tag: 'Deliveries',
      params: idParams,
      errors: ['not_found'],
      success: { status: 200, description: 'The attempt', data: deliverySchema },
      handler: async ({ principal, params }) => ({
        data: deliverySeenBy(principal.role)(await deliveries.get(principal.customerId, params.id)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/deliveries/:id/redeliver',
      operationId: 'redeliverDelivery',
      summary:
        'Send a transcript event again now (any state, dead included), outside its ordered queue; turn hook calls are 409; with test-hook, 10 a minute per deployment',
      tag: 'Deliveries',
      params: idParams,
      bodyOptional: true,
      errors: ['not_found', 'invalid_state', 'rate_limited'],
      success: { status: 200, description: 'The new attempt, whatever the receiver answered', data: deliverySchema },
      handler: async (ctx) => ({
        data: await deliveries.redeliver(ctx.principal.customerId, ctx.params.id, trail.by(ctx)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/deployments/:id/test-hook',
      operationId: 'testDeploymentHook',
      summary:
        'Send a signed sample ("test": true) to the hook or transcript URL and show what came back; 10 a minute per deployment',
      tag: 'Deliveries',
      params: idParams,
      body: testHookBody,
      bodyOptional: true,
      errors: ['not_found', 'invalid_state', 'rate_limited'],
      success: { status: 200, description: 'The attempt, whatever the receiver answered', data: deliverySchema },
      handler: async ({ principal, params, body }) => ({
        data: await deliveries.testHook(principal.customerId, params.id, body.target),
      }),
    }),
  ];
}
