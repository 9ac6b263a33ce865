import type { Db } from '../database.js';
import type { UsageDailyTable } from './api-key.table.js';

export async function addUsage(db: Db, rows: UsageDailyTable[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('usage_daily')
    .values(rows)
    .onConflict((oc) =>
      oc.columns(['customer_id', 'day', 'method', 'route']).doUpdateSet((eb) => ({
        requests: eb('usage_daily.requests', '+', eb.ref('excluded.requests')),
        errors: eb('usage_daily.errors', '+', eb.ref('excluded.errors')),
      })),
    )
    .execute();
}

export async function usageSince(db: Db, customerId: string, firstDay: string): Promise<UsageDailyTable[]> {
  return db
    .selectFrom('usage_daily')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('day', '>=', firstDay)
    .execute();
}
