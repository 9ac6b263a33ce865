import { TtlCache } from '../shared/ttl-cache.js';
import type { Db } from '../database.js';
import { hashApiKey, isWellFormedApiKey } from './api-key.format.js';
import { findApiKeyByHash } from './api-key.repository.js';
import type { Credential } from '../http/auth.js';
import type { Principal } from '../http/principal.js';
import { API_KEY_ROLE } from '../teams/roles.js';

const BEARER = /^Bearer +(\S+) *$/i;

interface Remembered {
  principal: Principal;
  /** The key's own expiry (a rotated key in its grace period), checked on every use. */
  expiresAtMs: number;
}

/**
 * Resolves presented keys, remembering live ones for `ttlMs` so a busy client costs no store
 * read per request. Rotation on this node forgets the customer's keys at once; another node
 * sees it within `ttlMs`. Unknown keys are never remembered, so guessing cannot fill memory.
 */
export class ApiKeyAuthenticator {
  readonly #remembered: TtlCache<Remembered>;

  constructor(
    private readonly db: Db,
    ttlMs = 1_000,
  ) {
    this.#remembered = new TtlCache(ttlMs);
  }

  async authenticate(presented: string): Promise<Principal | null> {
    if (!isWellFormedApiKey(presented)) return null;
    const hash = hashApiKey(presented);
    const now = Date.now();
    let entry = this.#remembered.get(hash, now);
    if (!entry) {
      const row = await findApiKeyByHash(this.db, hash);
      if (!row) return null;
      entry = {
        principal: { customerId: row.customer_id, keyId: row.id, role: API_KEY_ROLE },
        expiresAtMs: row.expires_at === null ? Infinity : Date.parse(row.expires_at),
      };
      this.#remembered.set(hash, entry, now);
    }
    return entry.expiresAtMs > now ? entry.principal : null;
  }

  forgetCustomer(customerId: string): void {
    this.#remembered.deleteWhere((entry) => entry.principal.customerId === customerId);
  }
}

/** `Authorization: Bearer <api key>` as a request's credential (README, The management API). */
export function bearerKey(keys: ApiKeyAuthenticator): Credential {
  const presented = (authorization: string | undefined) => BEARER.exec(authorization ?? '')?.[1];
  return {
    carried: (req) => presented(req.headers.authorization) !== undefined,
    identify: (req) => keys.authenticate(presented(req.headers.authorization)!),
    holds: async (req) => (await keys.authenticate(presented(req.headers.authorization)!)) !== null,
  };
}
