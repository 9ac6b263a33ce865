import { type RouteDef, defineRoute } from '../http/route.js';
import type { AuditTrail } from '../audit/audit-trail.js';
import { deletedSchema, explicitBody, idParams } from '../shared/schemas.js';
import { configWarnings, type ServiceAbilities } from './config-warnings.js';
import {
  configWarningsMetaSchema,
  createDeploymentBody,
  createdDeploymentSchema,
  deploymentSchema,
  listDeploymentsQuery,
  rotatedSecretSchema,
  rotateSecretBody,
  updateDeploymentBody,
} from './deployment.schemas.js';
import { deploymentSeenBy, type DeploymentService } from './deployment.service.js';

export function deploymentRoutes(
  deployments: DeploymentService,
  abilities: ServiceAbilities,
  trail: AuditTrail,
): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/deployments',
      operationId: 'listDeployments',
      summary: 'List deployments, newest first',
      tag: 'Deployments',
      query: listDeploymentsQuery,
      success: { status: 200, description: 'A page of deployments', data: deploymentSchema.array(), list: true },
      handler: async ({ principal, query: { page, per_page, ...filter } }) => {
        const listed = await deployments.list(principal.customerId, filter, { page, per_page });
        return { ...listed, data: listed.data.map(deploymentSeenBy(principal.role)) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/deployments',
      operationId: 'createDeployment',
      summary: 'Create an inactive deployment; its signing secret is shown only here',
      tag: 'Deployments',
      body: createDeploymentBody,
      errors: ['not_found'],
      success: {
        status: 201,
        description: 'The deployment with its signing secret',
        data: createdDeploymentSchema,
        meta: configWarningsMetaSchema,
      },
      handler: async (ctx) => ({
        data: await deployments.create(ctx.principal.customerId, ctx.body, trail.by(ctx)),
        meta: { warnings: configWarnings(ctx.body, abilities) },
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/deployments/:id',
      operationId: 'getDeployment',
      summary: 'Get a deployment (never its secret)',
      tag: 'Deployments',
      params: idParams,
      errors: ['not_found'],
      success: { status: 200, description: 'The deployment', data: deploymentSchema },
      handler: async ({ principal, params }) => ({
        data: deploymentSeenBy(principal.role)(await deployments.get(principal.customerId, params.id)),
      }),
    }),
    defineRoute({
      method: 'put',
      path: '/api/v1/deployments/:id',
      operationId: 'updateDeployment',
      summary: 'Update a deployment; each object given replaces the stored one',
      tag: 'Deployments',
      params: idParams,
      body: updateDeploymentBody,
      errors: ['not_found', 'invalid_state'],
      success: {
        status: 200,
        description: 'The updated deployment',
        data: deploymentSchema,
        meta: configWarningsMetaSchema,
      },
      handler: async (ctx) => ({
        data: await deployments.update(ctx.principal.customerId, ctx.params.id, ctx.body, trail.by(ctx)),
        meta: { warnings: configWarnings(ctx.body, abilities) },
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/v1/deployments/:id',
      operationId: 'deleteDeployment',
      summary: 'Delete an inactive deployment',
      tag: 'Deployments',
      params: idParams,
      errors: ['not_found', 'invalid_state'],
      success: { status: 200, description: 'Deleted', data: deletedSchema },
      handler: async (ctx) => ({
        data: await deployments.remove(ctx.principal.customerId, ctx.params.id, trail.by(ctx)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/deployments/:id/activate',
      operationId: 'activateDeployment',
      summary: 'Activate (needs a published agent and channel_config.hook_url)',
      tag: 'Deployments',
      params: idParams,
      errors: ['not_found', 'invalid_state'],
      success: { status: 200, description: 'The active deployment', data: deploymentSchema },
      handler: async (ctx) => ({
        data: await deployments.activate(ctx.principal.customerId, ctx.params.id, trail.by(ctx)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/deployments/:id/deactivate',
      operationId: 'deactivateDeployment',
      summary:
        'Deactivate; open widget sessions are ended. A JSON body is required (`{}` will do): a bare POST deactivates nothing',
      tag: 'Deployments',
      params: idParams,
      body: explicitBody,
      errors: ['not_found'],
      success: { status: 200, description: 'The inactive deployment', data: deploymentSchema },
      handler: async (ctx) => ({
        data: await deployments.deactivate(ctx.principal.customerId, ctx.params.id, trail.by(ctx)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/deployments/:id/transcript-hook/enable',
      operationId: 'enableTranscriptHook',
      summary:
        'Enable a transcript target disabled by a 410 Gone or 72 h of failures: its waiting events are delivered, in order',
      tag: 'Deployments',
      params: idParams,
      bodyOptional: true,
      errors: ['not_found', 'invalid_state'],
      success: { status: 200, description: 'The deployment, its transcript target active', data: deploymentSchema },
      handler: async (ctx) => ({
        data: await deployments.enableTranscripts(ctx.principal.customerId, ctx.params.id, trail.by(ctx)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/deployments/:id/rotate-secret',
      operationId: 'rotateDeploymentSecret',
      summary:
        'Issue a new signing secret (beyond the specification); the old one verifies during the grace period (default 3600 s). A JSON body is required (`{}` will do)',
      tag: 'Deployments',
      params: idParams,
      body: rotateSecretBody,
      errors: ['not_found'],
      success: { status: 200, description: 'The new secret, shown once', data: rotatedSecretSchema },
      handler: async (ctx) => ({
        data: await deployments.rotateSecret(
          ctx.principal.customerId,
          ctx.params.id,
          ctx.body.grace_period_s,
          trail.by(ctx),
        ),
      }),
    }),
  ];
}
