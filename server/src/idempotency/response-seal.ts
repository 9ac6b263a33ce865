import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const VERSION = 'v1';

/**
 * A kept response can carry a secret shown once (a new API key, a signing secret). It is stored
 * sealed (AES-256-GCM) under a key derived from the Idempotency-Key itself and the customer, which
 * the store never holds: the client that retries with the key gets the response back, and a reader
 * of the store learns nothing from it.
 */
export class ResponseSeal {
  readonly #key: Buffer;

  constructor(customerId: string, idempotencyKey: string) {
    this.#key = Buffer.from(hkdfSync('sha256', idempotencyKey, customerId, 'concierge idempotent response', 32));
  }

  /** `v1.iv.ciphertext.tag`, base64url. */
  seal(text: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv);
    const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
    return [VERSION, iv, sealed, cipher.getAuthTag()]
      .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
      .join('.');
  }

  /** The text sealed with this key; throws when it was sealed with another or altered. */
  open(stored: string): string {
    const [version, iv, sealed, tag] = stored.split('.');
    if (version !== VERSION || !iv || sealed === undefined || !tag) throw new Error('not a sealed response');
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(sealed, 'base64url')), decipher.final()]).toString('utf8');
  }
}
