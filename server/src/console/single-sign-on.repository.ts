import type { Db, Trx } from '../database.js';

/** Whether a customer's console takes single sign-on, and for which email domains (README, Your team). */
export interface SingleSignOnSettings {
  enabled: boolean;
  domains: string[];
}

/** Off, for a customer that never turned it on. */
const OFF: SingleSignOnSettings = { enabled: false, domains: [] };

const settingsOf = (row: { enabled: number; domains: string }): SingleSignOnSettings => ({
  enabled: row.enabled === 1,
  domains: JSON.parse(row.domains) as string[],
});

export async function singleSignOnOf(db: Db, customerId: string): Promise<SingleSignOnSettings> {
  const row = await db
    .selectFrom('console_single_sign_on')
    .select(['enabled', 'domains'])
    .where('customer_id', '=', customerId)
    .executeTakeFirst();
  return row ? settingsOf(row) : OFF;
}

/** The settings of each of these customers that has any, by id (a customer missing from it takes none). */
export async function singleSignOnOfEach(
  db: Db,
  customerIds: readonly string[],
): Promise<Map<string, SingleSignOnSettings>> {
  if (!customerIds.length) return new Map();
  const rows = await db
    .selectFrom('console_single_sign_on')
    .select(['customer_id', 'enabled', 'domains'])
    .where('customer_id', 'in', [...new Set(customerIds)])
    .execute();
  return new Map(rows.map((row) => [row.customer_id, settingsOf(row)]));
}

export async function setSingleSignOn(trx: Trx, customerId: string, settings: SingleSignOnSettings): Promise<void> {
  const values = { enabled: settings.enabled ? 1 : 0, domains: JSON.stringify(settings.domains) };
  await trx
    .insertInto('console_single_sign_on')
    .values({ customer_id: customerId, ...values })
    .onConflict((oc) => oc.column('customer_id').doUpdateSet(values))
    .execute();
}
