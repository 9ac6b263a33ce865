import { SignJWT } from 'jose';
import type { Principal } from '../../http/principal.js';
import type { DeploymentContext } from '../../deployments/deployment-context.js';
import { invalidState } from '../../errors.js';

const PREVIEW_TTL_S = 600;

export interface PreviewToken {
  token: string;
  sub: string;
  expires_at: string;
}

/** Who the preview's visitor is: the console user, or the key that asked. */
const previewSubject = (principal: Principal): string =>
  principal.userId ? `console:${principal.userId}` : `api-key:${principal.keyId}`;

/**
 * A ten-minute user token (README, The console) so the console, or a customer's QA page, can open the
 * real widget on an active deployment without a token endpoint of its own. Signed like a
 * customer's own tokens: HS256 with the deployment's current secret, `aud` the deployment.
 */
export async function mintPreviewToken(
  dep: DeploymentContext,
  principal: Principal,
  visitor: { name?: string | undefined; ctx?: Record<string, unknown> | undefined } = {},
): Promise<PreviewToken> {
  if (dep.status !== 'active') throw invalidState('The deployment is inactive: activate it to try it');
  const sub = previewSubject(principal);
  const now = Math.floor(Date.now() / 1000);
  // The visitor a preview plays, for the agent's variables (README, Variables and guardrails).
  const token = await new SignJWT({
    name: visitor.name ?? 'Console preview',
    ...(visitor.ctx ? { ctx: visitor.ctx } : {}),
    preview: true,
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(sub)
    .setAudience(dep.id)
    .setIssuedAt(now)
    .setExpirationTime(now + PREVIEW_TTL_S)
    .sign(new TextEncoder().encode(dep.signing.current));
  return { token, sub, expires_at: new Date((now + PREVIEW_TTL_S) * 1000).toISOString() };
}
