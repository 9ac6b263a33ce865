import { issueApiKey } from '../api-keys/api-key.service.js';
import { newId } from '../shared/random.js';
import { isoNow } from '../shared/time.js';
import type { Db } from '../database.js';
import { auditEntry, auditOf } from '../audit/audit-trail.js';

/** The first record of every customer's audit log: its key exists from here on. */
const customerCreated = (id: string) => auditEntry('customer.created', id, { changes: ['name', 'api_key'] });

export interface NewCustomer {
  customerId: string;
  apiKey: string;
}

/** A customer made by `npm run admin -- create-customer`, with its first key. */
export async function createCustomer(db: Db, name: string): Promise<NewCustomer> {
  return db.transaction().execute(async (trx) => {
    const customerId = newId();
    await trx.insertInto('customers').values({ id: customerId, name, created_at: isoNow() }).execute();
    const { key } = await issueApiKey(trx, customerId);
    await auditOf(customerId, 'admin')(trx, customerCreated(customerId));
    return { customerId, apiKey: key };
  });
}

/**
 * Creates the first customer on an empty store and returns its key, once. The flag row makes
 * this happen exactly once even when several nodes start together on one PostgreSQL database.
 */
export async function bootstrapCustomer(db: Db): Promise<NewCustomer | null> {
  return db.transaction().execute(async (trx) => {
    const claimed = await trx
      .insertInto('service_flags')
      .values({ name: 'bootstrap', created_at: isoNow() })
      .onConflict((oc) => oc.column('name').doNothing())
      .executeTakeFirst();
    if (Number(claimed.numInsertedOrUpdatedRows ?? 0) === 0) return null;
    const existing = await trx.selectFrom('customers').select('id').limit(1).executeTakeFirst();
    if (existing) return null;
    const customerId = newId();
    await trx.insertInto('customers').values({ id: customerId, name: 'Default', created_at: isoNow() }).execute();
    const { key } = await issueApiKey(trx, customerId);
    await auditOf(customerId, 'service')(trx, customerCreated(customerId));
    return { customerId, apiKey: key };
  });
}
