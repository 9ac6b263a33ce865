import { createHmac, timingSafeEqual } from 'node:crypto';
import { HookVerificationError } from './errors.js';
import { TRANSCRIPT_EVENT_TYPES, type ToolCall, type TranscriptEvent, type TurnHook } from './events.js';

/** What a call to your server carries: a turn hook, a model agent's tool call or a transcript event. */
export type HookEvent = TurnHook | ToolCall | TranscriptEvent;

/** Request headers as Node's `http` gives them, a `Headers` object (fetch, Next.js, Hono), or a plain map. */
export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far the signed time may be from now, in seconds (default 300, as Standard Webhooks). */
  toleranceSeconds?: number;
  /** The time to check against (tests). */
  now?: Date;
  /**
   * Accept a turn hook (or a tool call) signed with `X-Service-Signature` alone, dated by its signed `sent_at`, when
   * something between the service and you strips the `webhook-*` headers (default: false). A
   * transcript event always needs the Standard Webhooks headers: its body carries no send time, so
   * without them a recorded one could be replayed for ever.
   */
  allowServiceSignatureAlone?: boolean;
}

const DEFAULT_TOLERANCE_S = 300;
const SECRET_PREFIX = 'whsec_';
const HEX_SIGNATURE = /^sha256=([0-9a-f]{64})$/;
const DIGEST_BYTES = 32;
/** The shortest key a secret may give (Standard Webhooks: 24 to 64 bytes); the service's give 30. */
const MIN_KEY_BYTES = 24;

/** The two keys a signing secret gives: its UTF-8 bytes (`X-Service-Signature`) and its base64 decoding (Standard Webhooks). */
interface Keys {
  text: Buffer;
  standard: Buffer;
}
const keyCache = new Map<string, Keys>();

function keysOf(secret: string): Keys {
  let keys = keyCache.get(secret);
  if (!keys) {
    const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
    keys = { text: Buffer.from(secret, 'utf8'), standard: Buffer.from(encoded, 'base64') };
    // `whsec_` alone, or a few characters, would make a key anyone can guess.
    if (keys.standard.length < MIN_KEY_BYTES)
      throw new HookVerificationError(
        'invalid_secret',
        `A signing secret must be whsec_ and at least ${MIN_KEY_BYTES} bytes in base64: pass the deployment's signing_secret as the service showed it`,
      );
    if (keyCache.size > 64) keyCache.clear();
    keyCache.set(secret, keys);
  }
  return keys;
}

export function headerOf(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

const asBuffer = (body: string | Uint8Array): Buffer =>
  typeof body === 'string'
    ? Buffer.from(body, 'utf8')
    : Buffer.isBuffer(body)
      ? body
      : Buffer.from(body.buffer, body.byteOffset, body.byteLength);

/** Whether `digest` equals one of `presented`, each compared in constant time. */
function matchesAny(presented: Buffer[], digest: Buffer): boolean {
  let found = false;
  // Every candidate is compared, so the time taken does not say which one matched.
  for (const candidate of presented)
    if (candidate.length === DIGEST_BYTES && timingSafeEqual(candidate, digest)) found = true;
  return found;
}

function checkStandard(
  body: Buffer,
  headers: HeaderSource,
  signatures: string,
  secrets: readonly string[],
  tolerance: number,
  now: number,
): void {
  const id = headerOf(headers, 'webhook-id');
  const timestamp = headerOf(headers, 'webhook-timestamp');
  if (!id || !timestamp || !/^\d{1,12}$/.test(timestamp))
    throw new HookVerificationError(
      'missing_signature',
      'webhook-id and webhook-timestamp must come with webhook-signature',
    );
  if (Math.abs(now - Number(timestamp)) > tolerance)
    throw new HookVerificationError(
      'stale_timestamp',
      `webhook-timestamp is more than ${tolerance} s from now: a replay, or a clock that is wrong`,
    );
  const presented = signatures
    .split(' ')
    .filter((s) => s.startsWith('v1,'))
    .map((s) => Buffer.from(s.slice(3), 'base64'));
  const prefix = Buffer.from(`${id}.${timestamp}.`, 'utf8');
  for (const secret of secrets) {
    const digest = createHmac('sha256', keysOf(secret).standard).update(prefix).update(body).digest();
    if (matchesAny(presented, digest)) return;
  }
  throw new HookVerificationError(
    'invalid_signature',
    'No webhook-signature matches these bytes with the secrets given',
  );
}

function checkServiceSignature(body: Buffer, header: string, secrets: readonly string[]): void {
  const hex = HEX_SIGNATURE.exec(header)?.[1];
  if (!hex)
    throw new HookVerificationError(
      'invalid_signature',
      'X-Service-Signature must be sha256= and 64 lowercase hex digits',
    );
  const presented = [Buffer.from(hex, 'hex')];
  for (const secret of secrets) {
    if (matchesAny(presented, createHmac('sha256', keysOf(secret).text).update(body).digest())) return;
  }
  throw new HookVerificationError(
    'invalid_signature',
    'X-Service-Signature does not match these bytes with the secrets given',
  );
}

function parse(body: Buffer): HookEvent {
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new HookVerificationError('invalid_body', 'The body is not JSON');
  }
  const event = value as Partial<Record<string, unknown>> | null;
  const known =
    event !== null &&
    typeof event === 'object' &&
    ((event.type === 'turn.created' && typeof event.delivery_id === 'string') ||
      (event.type === 'tool.call' && typeof event.call_id === 'string') ||
      (typeof event.id === 'string' &&
        typeof event.data === 'object' &&
        (TRANSCRIPT_EVENT_TYPES as readonly unknown[]).includes(event.type)));
  if (!known)
    throw new HookVerificationError(
      'invalid_body',
      'The body is neither a turn hook, a tool call nor a transcript event',
    );
  return value as HookEvent;
}

/** The secrets given, each checked to make a key of at least 24 bytes; throws `no_secret` or `invalid_secret`. */
export function checkSecrets(secrets: string | readonly string[]): string[] {
  const keys = (typeof secrets === 'string' ? [secrets] : secrets).filter((s) => s.length > 0);
  if (keys.length === 0)
    throw new HookVerificationError('no_secret', "No signing secret given: pass the deployment's signing_secret");
  for (const key of keys) keysOf(key);
  return keys;
}

/**
 * Checks that a call to your server came from Concierge, on the exact bytes received (read the raw
 * body before any JSON parsing), and returns what it carries. The Standard Webhooks headers
 * (`webhook-id`, `webhook-timestamp`, `webhook-signature`) are required and their timestamp must be
 * within the tolerance; with `allowServiceSignatureAlone`, a turn hook may come with
 * `X-Service-Signature` alone, its signed `sent_at` within the tolerance. `secrets` is the
 * deployment's signing secret, or several while a rotation's grace period lasts. Throws
 * {@link HookVerificationError}.
 */
export function verifyHook(
  rawBody: string | Uint8Array,
  headers: HeaderSource,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): HookEvent {
  const keys = checkSecrets(secrets);
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_S;
  const now = (options.now ?? new Date()).getTime() / 1000;
  const body = asBuffer(rawBody);
  const standard = headerOf(headers, 'webhook-signature');
  const service = headerOf(headers, 'x-service-signature');
  if (standard !== undefined) {
    checkStandard(body, headers, standard, keys, tolerance, now);
    return parse(body);
  }
  if (service === undefined || !options.allowServiceSignatureAlone)
    throw new HookVerificationError(
      'missing_signature',
      'webhook-id, webhook-timestamp and webhook-signature are required (the service sends them on every call): check that nothing in front of your server strips them',
    );
  checkServiceSignature(body, service, keys);
  const event = parse(body);
  // Under X-Service-Signature alone, a turn hook's signed sent_at is what dates the call; a transcript event has nothing that does.
  if (!('sent_at' in event))
    throw new HookVerificationError(
      'missing_signature',
      'A transcript event needs the Standard Webhooks headers: its body carries no send time',
    );
  const sentAt = Date.parse(event.sent_at) / 1000;
  if (!(Math.abs(now - sentAt) <= tolerance))
    throw new HookVerificationError(
      'stale_timestamp',
      `sent_at is more than ${tolerance} s from now: a replay, or a clock that is wrong`,
    );
  return event;
}

/** Whether a verified call is a turn hook. */
export const isTurnHook = (event: HookEvent): event is TurnHook => 'delivery_id' in event;

/** Whether a verified call is a model agent's tool call (README, An agent without a server). */
export const isToolCall = (event: HookEvent): event is ToolCall => 'call_id' in event;

/** `X-Service-Signature` for the exact bytes you send to the service (a reply, or a part). */
export function signBody(secret: string, body: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(asBuffer(body)).digest('hex')}`;
}
