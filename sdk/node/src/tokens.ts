import { createHmac } from 'node:crypto';

export interface UserTokenOptions {
  /** The deployment the token opens (its `aud`). */
  deploymentId: string;
  /** The deployment's signing secret (`whsec_...`): keep it on your server. */
  secret: string;
  /** Your stable id for the visitor, 1 to 256 characters: a conversation resumes for the same `sub` only. */
  sub: string;
  /** What the visitor is called (at most 256 characters); your hook sees it. */
  name?: string;
  /** Anything your hook should see with each of this visitor's turns: an object of at most 4 KiB as JSON. */
  ctx?: Record<string, unknown>;
  /** Lifetime in seconds, 1 to 86,400 (default 3,600); the widget asks for a new token a minute before it ends. */
  ttl?: number;
  /** The time it is issued at (tests). */
  now?: Date;
}

const MAX_TTL_S = 86_400;
const MAX_CTX_BYTES = 4096;
const MAX_TEXT = 256;

const segment = (value: unknown): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
const codePoints = (text: string): number => [...text].length;

/**
 * A user token for the widget: an HS256 JWT for one deployment and one visitor, within the
 * service's limits (anything outside them throws a `RangeError` or `TypeError` here, not a refused
 * widget later).
 */
export function mintUserToken(o: UserTokenOptions): string {
  if (typeof o.deploymentId !== 'string' || o.deploymentId === '') throw new TypeError('deploymentId is required');
  if (typeof o.secret !== 'string' || o.secret === '')
    throw new TypeError("secret is required: the deployment's signing_secret");
  if (typeof o.sub !== 'string' || codePoints(o.sub) < 1 || codePoints(o.sub) > MAX_TEXT)
    throw new RangeError('sub must be 1 to 256 characters');
  if (o.name !== undefined && (typeof o.name !== 'string' || codePoints(o.name) > MAX_TEXT))
    throw new RangeError('name must be a string of at most 256 characters');
  if (o.ctx !== undefined && (o.ctx === null || typeof o.ctx !== 'object' || Array.isArray(o.ctx)))
    throw new TypeError('ctx must be an object');
  if (o.ctx !== undefined && Buffer.byteLength(JSON.stringify(o.ctx)) > MAX_CTX_BYTES)
    throw new RangeError('ctx must be at most 4 KiB as JSON');
  const ttl = o.ttl ?? 3600;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > MAX_TTL_S)
    throw new RangeError('ttl must be a whole number of seconds from 1 to 86400');
  const iat = Math.floor((o.now ?? new Date()).getTime() / 1000);
  const claims = {
    aud: o.deploymentId,
    sub: o.sub,
    iat,
    exp: iat + ttl,
    ...(o.name !== undefined ? { name: o.name } : {}),
    ...(o.ctx !== undefined ? { ctx: o.ctx } : {}),
  };
  const unsigned = `${segment({ alg: 'HS256', typ: 'JWT' })}.${segment(claims)}`;
  return `${unsigned}.${createHmac('sha256', o.secret).update(unsigned).digest('base64url')}`;
}
