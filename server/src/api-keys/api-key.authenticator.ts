import type { Db } from '../store/database.js';
import { hashApiKey, isWellFormedApiKey } from './api-key.format.js';
import { findApiKeyByHash } from './api-key.repository.js';
import type { Principal } from './api-key.service.js';

interface Remembered {
  principal: Principal;
  /** The key's own expiry (a rotated key in its grace period), checked on every use. */
  expiresAtMs: number;
  until: number;
}

/**
 * Resolves presented keys, remembering live ones for `ttlMs` so a busy client costs no store
 * read per request. Rotation on this node forgets the customer's keys at once; another node
 * sees it within `ttlMs`. Unknown keys are never remembered, so guessing cannot fill memory.
 */
export class ApiKeyAuthenticator {
  readonly #remembered = new Map<string, Remembered>();

  constructor(
    private readonly db: Db,
    private readonly ttlMs = 1_000,
    private readonly capacity = 10_000,
  ) {}

  async authenticate(presented: string): Promise<Principal | null> {
    if (!isWellFormedApiKey(presented)) return null;
    const hash = hashApiKey(presented);
    const now = Date.now();
    let entry = this.#remembered.get(hash);
    if (!entry || entry.until <= now) {
      const row = await findApiKeyByHash(this.db, hash);
      if (!row) {
        this.#remembered.delete(hash);
        return null;
      }
      entry = {
        principal: { customerId: row.customer_id, keyId: row.id },
        expiresAtMs: row.expires_at === null ? Infinity : Date.parse(row.expires_at),
        until: now + this.ttlMs,
      };
      if (this.#remembered.size >= this.capacity) this.#remembered.delete(this.#remembered.keys().next().value!);
      this.#remembered.set(hash, entry);
    }
    return entry.expiresAtMs > now ? entry.principal : null;
  }

  forgetCustomer(customerId: string): void {
    for (const [hash, entry] of this.#remembered) {
      if (entry.principal.customerId === customerId) this.#remembered.delete(hash);
    }
  }
}
