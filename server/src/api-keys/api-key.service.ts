import { AppError } from '../errors.js';
import { newId } from '../shared/random.js';
import { isoIn, isoNow } from '../shared/time.js';
import type { Db } from '../database.js';
import { type Audit, auditEntry } from '../audit/audit-trail.js';
import { generateApiKey, hashApiKey, keyLast4, keyPrefix } from './api-key.format.js';
import { findCurrentApiKey, findPreviousKeyExpiry, insertApiKey, retireApiKeys } from './api-key.repository.js';

export interface ApiKeySettings {
  id: string;
  prefix: string;
  last4: string;
  created_at: string;
  last_used_at: string | null;
  previous_key_expires_at: string | null;
}

/** Issues a new current key for the customer. The returned value is the only copy there will be. */
export async function issueApiKey(db: Db, customerId: string): Promise<{ key: string; id: string }> {
  const key = generateApiKey();
  const id = newId();
  await insertApiKey(db, {
    id,
    customer_id: customerId,
    key_hash: hashApiKey(key),
    prefix: keyPrefix(key),
    last4: keyLast4(key),
    created_at: isoNow(),
    last_used_at: null,
    expires_at: null,
  });
  return { key, id };
}

export async function getApiKeySettings(db: Db, customerId: string): Promise<ApiKeySettings> {
  const current = await findCurrentApiKey(db, customerId);
  if (!current) throw new AppError('not_found', 'No API key is issued for this customer');
  return {
    id: current.id,
    prefix: current.prefix,
    last4: current.last4,
    created_at: current.created_at,
    last_used_at: current.last_used_at,
    previous_key_expires_at: await findPreviousKeyExpiry(db, customerId, isoNow()),
  };
}

/** Replaces the current key; the old one keeps working for `graceSeconds` (0: fails at once). */
export async function rotateApiKey(
  db: Db,
  customerId: string,
  graceSeconds: number,
  audit: Audit,
): Promise<ApiKeySettings & { key: string }> {
  const { key } = await db.transaction().execute(async (trx) => {
    await retireApiKeys(trx, customerId, graceSeconds > 0 ? isoIn(graceSeconds * 1000) : isoNow());
    const issued = await issueApiKey(trx, customerId);
    await audit(trx, auditEntry('api_key.rotated', issued.id, { changes: ['key'] }));
    return issued;
  });
  return { ...(await getApiKeySettings(db, customerId)), key };
}
