import { createHmac, timingSafeEqual } from 'node:crypto';

const HEADER = /^sha256=([0-9a-f]{64})$/;

/** `sha256=` + lowercase hex HMAC-SHA256 of the exact bytes, keyed by the secret's UTF-8 bytes. */
export const signatureOf = (secret: string, body: Buffer | string): string =>
  `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;

/**
 * True when the header is well formed and matches the HMAC of these raw bytes under any of
 * the secrets. Compared in constant time, and every secret is tried, so timing says nothing
 * about which part or which secret failed.
 */
export function verifySignature(header: string | undefined, body: Buffer, secrets: readonly string[]): boolean {
  const match = HEADER.exec(header ?? '');
  if (!match) return false;
  const presented = Buffer.from(match[1]!, 'hex');
  let matched = false;
  for (const secret of secrets) {
    const expected = createHmac('sha256', secret).update(body).digest();
    if (timingSafeEqual(expected, presented)) matched = true;
  }
  return matched;
}

/**
 * A Standard Webhooks signature (README, Verifying signatures): `v1,` and the base64 HMAC-SHA256 of
 * `{id}.{timestamp}.{body}`, keyed by the base64 decoding of the secret after its `whsec_` prefix.
 */
export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * The three Standard Webhooks headers of one outbound call, so a customer can verify it with that
 * specification's library in any language. `secrets` are the live ones, current first: during a
 * rotation's grace the header carries a signature for each, space-separated.
 */
export function standardWebhookHeaders(
  id: string,
  body: string,
  secrets: readonly string[],
  now = Date.now(),
): Record<string, string> {
  const timestamp = Math.floor(now / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((secret) => standardSignature(secret, id, timestamp, body)).join(' '),
  };
}
