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
