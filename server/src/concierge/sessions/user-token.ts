import { decodeJwt, decodeProtectedHeader, errors, jwtVerify } from 'jose';
import { z } from 'zod';
import { AppError } from '../../errors.js';
import { jsonHygieneProblem } from '../../shared/json-hygiene.js';
import type { TokenCause } from '../diagnostics/diagnostics.table.js';

export const MAX_TOKEN_LIFETIME_S = 86_400;
const CLOCK_TOLERANCE_S = 30;

const claimsSchema = z.object({
  sub: z.string().min(1).max(256),
  iat: z.number(),
  exp: z.number(),
  name: z.string().max(256).optional(),
  ctx: z
    .record(z.string(), z.unknown())
    .refine((v) => Buffer.byteLength(JSON.stringify(v)) <= 4096, { message: 'ctx must be at most 4 KiB' })
    .optional(),
  // Set by preview tokens (README, The console): the conversation stays out of the inbox.
  preview: z.literal(true).optional(),
});

export interface UserClaims {
  sub: string;
  name?: string | undefined;
  ctx?: Record<string, unknown> | undefined;
  preview?: true | undefined;
  /** Seconds since the epoch. */
  exp: number;
}

/** A token's claims, or why it is refused (`invalid_token`, `token_expired`, or `forbidden` for another deployment's). */
export type TokenCheck = { ok: true; claims: UserClaims } | { ok: false; error: AppError; cause: TokenCause };

const refuse = (
  code: 'invalid_token' | 'token_expired' | 'forbidden',
  message: string,
  cause: TokenCause = 'claims',
): TokenCheck => ({ ok: false, error: new AppError(code, message), cause });

/**
 * Verifies a user token for one deployment: HS256 only, signed with one of its live secrets,
 * `aud` naming it, `sub`/`iat`/`exp` present and a lifetime of at most a day.
 */
export async function verifyUserToken(
  token: string,
  deploymentId: string,
  secrets: readonly string[],
): Promise<TokenCheck> {
  let audience: unknown;
  try {
    if (decodeProtectedHeader(token).alg !== 'HS256')
      return refuse('invalid_token', 'Tokens must be signed with HS256', 'signature');
    audience = decodeJwt(token).aud;
  } catch {
    return refuse('invalid_token', 'The token is not a JWT', 'signature');
  }
  // Checked before the signature: a token for another deployment cannot be verified here at all.
  const audiences = Array.isArray(audience) ? audience : [audience];
  if (!audiences.includes(deploymentId))
    return refuse('forbidden', 'The token was issued for another deployment', 'audience');

  for (const secret of secrets) {
    try {
      const { payload } = await jwtVerify(token, new TextEncoder().encode(secret), {
        algorithms: ['HS256'],
        audience: deploymentId,
        clockTolerance: CLOCK_TOLERANCE_S,
        requiredClaims: ['sub', 'iat', 'exp'],
      });
      const unclean = jsonHygieneProblem(payload, 'claims');
      if (unclean) return refuse('invalid_token', `Invalid claims: ${unclean.path} ${unclean.message}`);
      const claims = claimsSchema.safeParse(payload);
      if (!claims.success)
        return refuse('invalid_token', `Invalid claims: ${claims.error.issues.map((i) => i.message).join('; ')}`);
      const { iat, exp } = claims.data;
      if (exp - iat > MAX_TOKEN_LIFETIME_S)
        return refuse('invalid_token', 'Tokens may live at most 24 hours (exp - iat)');
      // Whatever iat says: a token minted "in the future" would otherwise outlive the cap.
      const now = Date.now() / 1000;
      if (iat > now + CLOCK_TOLERANCE_S) return refuse('invalid_token', 'The token was issued in the future (iat)');
      if (exp > now + MAX_TOKEN_LIFETIME_S + CLOCK_TOLERANCE_S)
        return refuse('invalid_token', 'Tokens may expire at most 24 hours from now (exp)');
      return { ok: true, claims: claims.data };
    } catch (err) {
      if (err instanceof errors.JWTExpired) return refuse('token_expired', 'The token has expired', 'expired');
      if (err instanceof errors.JWSSignatureVerificationFailed) continue;
      return refuse('invalid_token', err instanceof errors.JOSEError ? err.message : 'Invalid token');
    }
  }
  return refuse('invalid_token', 'The token signature does not verify', 'signature');
}
