import type { Db } from '../database.js';
import type { ApiKeyTable } from './api-key.table.js';

export type ApiKeyRow = ApiKeyTable;

export async function insertApiKey(db: Db, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

export async function findApiKeyByHash(
  db: Db,
  keyHash: string,
): Promise<Pick<ApiKeyRow, 'id' | 'customer_id' | 'expires_at'> | undefined> {
  return db
    .selectFrom('api_keys')
    .select(['id', 'customer_id', 'expires_at'])
    .where('key_hash', '=', keyHash)
    .executeTakeFirst();
}

export async function findCurrentApiKey(db: Db, customerId: string): Promise<ApiKeyRow | undefined> {
  return db
    .selectFrom('api_keys')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('expires_at', 'is', null)
    .executeTakeFirst();
}

/** The latest expiry among retired keys that still work, if any. */
export async function findPreviousKeyExpiry(db: Db, customerId: string, now: string): Promise<string | null> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.max('expires_at').as('expires_at'))
    .where('customer_id', '=', customerId)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row?.expires_at ?? null;
}

/** Retires the current key (and shortens any older grace) to `expiresAt`. */
export async function retireApiKeys(db: Db, customerId: string, expiresAt: string): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ expires_at: expiresAt })
    .where('customer_id', '=', customerId)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', expiresAt)]))
    .execute();
}

export async function touchApiKeys(db: Db, lastUsed: ReadonlyMap<string, string>): Promise<void> {
  for (const [id, at] of lastUsed) {
    await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }
}
