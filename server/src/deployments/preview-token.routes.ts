import { SignJWT } from 'jose';
import { z } from 'zod';
import type { Principal } from '../api-keys/api-key.service.js';
import type { DeploymentDirectory } from '../concierge/deployment-context.js';
import { invalidState, notFound } from '../errors.js';
import { type RouteDef, defineRoute } from '../http/route.js';
import { idParams } from '../shared/schemas.js';

const PREVIEW_TTL_S = 600;

export const previewTokenSchema = z
  .object({
    token: z.string().meta({ description: 'A user token (HS256, `aud` = the deployment) for `Concierge.init({getToken})`' }),
    sub: z.string().meta({ description: '`console:{user id}` for a console user, `api-key:{key id}` with a Bearer key' }),
    expires_at: z.iso.datetime(),
  })
  .meta({ id: 'PreviewToken' });

/** Who the preview's visitor is: the console user, or the key that asked. */
const previewSubject = (principal: Principal): string => (principal.userId ? `console:${principal.userId}` : `api-key:${principal.keyId}`);

/**
 * `POST /api/v1/deployments/{id}/preview-token` (contract §15): a ten-minute user token so the
 * console (or a customer's QA page) can open the real widget without a token endpoint of its own.
 */
export function previewTokenRoute(deployments: DeploymentDirectory): RouteDef {
  return defineRoute({
    method: 'post',
    path: '/api/v1/deployments/:id/preview-token',
    operationId: 'mintPreviewToken',
    summary: 'Mint a ten-minute user token for trying an active deployment',
    tag: 'Deployments',
    params: idParams,
    errors: ['not_found', 'invalid_state'],
    success: { status: 200, description: 'The token, for the widget', data: previewTokenSchema },
    handler: async ({ principal, params }) => {
      const dep = await deployments.fresh(params.id);
      if (dep?.customerId !== principal.customerId) throw notFound('Deployment');
      if (dep.status !== 'active') throw invalidState('The deployment is inactive: activate it to try it');
      const sub = previewSubject(principal);
      const now = Math.floor(Date.now() / 1000);
      const token = await new SignJWT({ name: 'Console preview' })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(sub)
        .setAudience(dep.id)
        .setIssuedAt(now)
        .setExpirationTime(now + PREVIEW_TTL_S)
        .sign(new TextEncoder().encode(dep.signingSecret));
      return { data: { token, sub, expires_at: new Date((now + PREVIEW_TTL_S) * 1000).toISOString() } };
    },
  });
}
