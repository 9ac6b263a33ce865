import type { Db } from '../database.js';
import type { IdempotencyKeyTable } from './idempotency.table.js';

export type IdempotencyRow = IdempotencyKeyTable;

/** Claims the key for a new request; false when a row for it already exists. */
export async function claimKey(db: Db, row: IdempotencyRow): Promise<boolean> {
  const result = await db
    .insertInto('idempotency_keys')
    .values(row)
    .onConflict((oc) => oc.columns(['customer_id', 'key']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}

export async function findKey(db: Db, customerId: string, key: string): Promise<IdempotencyRow | undefined> {
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('key', '=', key)
    .executeTakeFirst();
}

/** Takes over a row whose holder's lock ran out, or that is past its 24 h: exactly one taker wins. */
export async function takeOverKey(
  db: Db,
  seen: IdempotencyRow,
  next: Pick<IdempotencyRow, 'fingerprint' | 'locked_until' | 'created_at'>,
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ ...next, state: 'running', response_status: null, response_headers: null, response_body: null })
    .where('customer_id', '=', seen.customer_id)
    .where('key', '=', seen.key)
    .where('locked_until', '=', seen.locked_until)
    .where('created_at', '=', seen.created_at)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function completeKey(
  db: Db,
  customerId: string,
  key: string,
  response: Pick<IdempotencyRow, 'response_status' | 'response_headers' | 'response_body'>,
): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ ...response, state: 'done' })
    .where('customer_id', '=', customerId)
    .where('key', '=', key)
    .execute();
}

export async function releaseKey(db: Db, customerId: string, key: string): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('customer_id', '=', customerId)
    .where('key', '=', key)
    .where('state', '=', 'running')
    .execute();
}

/** Deletes keys created before `before`; run often, so each run deletes a few minutes' worth. */
export async function purgeKeys(db: Db, before: string): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('created_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
