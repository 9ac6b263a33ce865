import { z } from 'zod';
import type { DeploymentDirectory } from '../../deployments/deployment-context.js';
import { type RouteDef, defineRoute } from '../../http/route.js';
import { idParams } from '../../shared/schemas.js';
import { mintPreviewToken } from './preview-token.js';

export const previewTokenSchema = z
  .object({
    token: z
      .string()
      .meta({ description: 'A user token (HS256, `aud` = the deployment) for `Concierge.init({getToken})`' }),
    sub: z
      .string()
      .meta({ description: '`console:{user id}` for a console user, `api-key:{key id}` with a Bearer key' }),
    expires_at: z.iso.datetime(),
  })
  .meta({ id: 'PreviewToken' });

/** Who the preview's visitor is, for an agent's variables (README, Variables and guardrails); absent: "Console preview", no ctx. */
export const previewVisitor = z
  .strictObject({
    name: z.string().trim().min(1).max(200).optional().meta({ description: "The token's `name`: `{{visitor.name}}`" }),
    ctx: z
      .record(z.string(), z.json())
      .refine((ctx) => JSON.stringify(ctx).length <= 4_096, 'must be at most 4 KiB as JSON')
      .optional()
      .meta({ description: "The token's `ctx`: `{{ctx.KEY}}`" }),
  })
  .meta({ id: 'PreviewVisitor' });

/** `POST /api/v1/deployments/{id}/preview-token` (README, The console). */
export function previewTokenRoute(deployments: DeploymentDirectory): RouteDef {
  return defineRoute({
    method: 'post',
    path: '/api/v1/deployments/:id/preview-token',
    operationId: 'mintPreviewToken',
    summary: 'Mint a ten-minute user token for trying an active deployment',
    tag: 'Deployments',
    params: idParams,
    body: previewVisitor,
    bodyOptional: true,
    errors: ['not_found', 'invalid_state', 'invalid_request'],
    success: { status: 200, description: 'The token, for the widget', data: previewTokenSchema },
    handler: async ({ principal, params, body }) => ({
      data: await mintPreviewToken(await deployments.owned(principal.customerId, params.id), principal, body),
    }),
  });
}
