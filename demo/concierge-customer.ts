/**
 * What a customer's server needs to talk to Concierge, in one small module with no dependency
 * beyond `jose` and Node's crypto:
 *
 * ```ts
 * import { mintUserToken, signBody, verifySignature } from './concierge-customer.js';
 *
 * // 1. Your page asks your server for a token; your server vouches for the visitor.
 * const token = await mintUserToken({ secret: SIGNING_SECRET, deploymentId, sub: user.id, name: user.name });
 *
 * // 2. The turn hook: check the signature on the exact bytes you received, then answer 202.
 * if (!verifySignature(SIGNING_SECRET, rawBody, req.headers['x-service-signature'])) return res.writeHead(401).end();
 *
 * // 3. Later, the reply: sign the exact bytes you send.
 * const body = JSON.stringify({ conversation_id, turn_id, reply_text: 'Breakfast is from 7 to 10.' });
 * await fetch(hook.reply_url, { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-service-signature': signBody(SIGNING_SECRET, body) } });
 * ```
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { SignJWT } from 'jose';

export interface UserTokenOptions {
  /** The deployment's signing secret (`whsec_...`), kept on your server. */
  secret: string;
  /** The token is good for this deployment only (its `aud`). */
  deploymentId: string;
  /** Your stable id for the visitor: a conversation can be resumed by the same `sub` only. */
  sub: string;
  name?: string;
  /** Anything your hook should see with each turn (at most 4 KiB as JSON). */
  ctx?: Record<string, unknown>;
  /** Lifetime, at most 86,400 s; the widget refreshes the token before it runs out. Default 3,600 s. */
  ttlSeconds?: number;
}

/** A user token for the widget: HS256, signed with the deployment's signing secret. */
export function mintUserToken(o: UserTokenOptions): Promise<string> {
  const iat = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = {};
  if (o.name !== undefined) claims.name = o.name;
  if (o.ctx !== undefined) claims.ctx = o.ctx;
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setAudience(o.deploymentId)
    .setSubject(o.sub)
    .setIssuedAt(iat)
    .setExpirationTime(iat + (o.ttlSeconds ?? 3600))
    .sign(new TextEncoder().encode(o.secret));
}

/** `X-Service-Signature` for these exact bytes: sign the string you send, never a re-serialised copy. */
export function signBody(secret: string, body: string | Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Checks a hook or transcript call's `X-Service-Signature` on the raw body, in constant time. */
export function verifySignature(secret: string, rawBody: string | Buffer, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(signBody(secret, rawBody));
  const presented = Buffer.from(header);
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}
