import { hkdfSync } from 'node:crypto';
import { openText, sealText } from '../shared/sealed-text.js';

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
    return sealText(this.#key, text);
  }

  /** The text sealed with this key; throws when it was sealed with another or altered. */
  open(stored: string): string {
    return openText(this.#key, stored);
  }
}
