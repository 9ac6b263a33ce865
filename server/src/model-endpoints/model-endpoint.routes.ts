import type { AuditTrail } from '../audit/audit-trail.js';
import { type RouteDef, defineRoute } from '../http/route.js';
import { deletedSchema, idParams } from '../shared/schemas.js';
import {
  createModelEndpointBody,
  listModelEndpointsQuery,
  modelEndpointSchema,
  updateModelEndpointBody,
} from './model-endpoint.schemas.js';
import type { ModelEndpointService } from './model-endpoint.service.js';

export function modelEndpointRoutes(endpoints: ModelEndpointService, trail: AuditTrail): RouteDef[] {
  const tag = 'Model endpoints';
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/model-endpoints',
      operationId: 'listModelEndpoints',
      summary: 'List model endpoints, newest first (never their keys)',
      tag,
      query: listModelEndpointsQuery,
      success: { status: 200, description: 'A page of model endpoints', data: modelEndpointSchema.array(), list: true },
      handler: ({ principal, query }) => endpoints.list(principal.customerId, query),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/model-endpoints',
      operationId: 'createModelEndpoint',
      summary: "Add an OpenAI-compatible endpoint for agents' models; its key is write-only",
      tag,
      body: createModelEndpointBody,
      success: { status: 201, description: 'The endpoint', data: modelEndpointSchema },
      handler: async (ctx) => ({ data: await endpoints.create(ctx.principal.customerId, ctx.body, trail.by(ctx)) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/model-endpoints/:id',
      operationId: 'getModelEndpoint',
      summary: 'Get a model endpoint (never its key)',
      tag,
      params: idParams,
      errors: ['not_found'],
      success: { status: 200, description: 'The endpoint', data: modelEndpointSchema },
      handler: async ({ principal, params }) => ({ data: await endpoints.get(principal.customerId, params.id) }),
    }),
    defineRoute({
      method: 'put',
      path: '/api/v1/model-endpoints/:id',
      operationId: 'updateModelEndpoint',
      summary: 'Change its name, base URL or key (null removes the key)',
      tag,
      params: idParams,
      body: updateModelEndpointBody,
      errors: ['not_found'],
      success: { status: 200, description: 'The updated endpoint', data: modelEndpointSchema },
      handler: async (ctx) => ({
        data: await endpoints.update(ctx.principal.customerId, ctx.params.id, ctx.body, trail.by(ctx)),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/v1/model-endpoints/:id',
      operationId: 'deleteModelEndpoint',
      summary: "Delete a model endpoint no agent's spec names",
      tag,
      params: idParams,
      errors: ['not_found', 'invalid_state'],
      success: { status: 200, description: 'Deleted', data: deletedSchema },
      handler: async (ctx) => ({
        data: await endpoints.remove(ctx.principal.customerId, ctx.params.id, trail.by(ctx)),
      }),
    }),
  ];
}
