import type { Db, Trx } from '../database.js';

/** Whether a customer's console takes single sign-on, and for which email domains (README, Your team). */
export interface SingleSignOnSettings {
  enabled: boolean;
  domains: string[];
}

const settingsOf = (row: { sso_enabled: number; sso_domains: string }): SingleSignOnSettings => ({
  enabled: row.sso_enabled === 1,
  domains: JSON.parse(row.sso_domains) as string[],
});

export async function singleSignOnOf(db: Db, customerId: string): Promise<SingleSignOnSettings> {
  const row = await db
    .selectFrom('customers')
    .select(['sso_enabled', 'sso_domains'])
    .where('id', '=', customerId)
    .executeTakeFirstOrThrow();
  return settingsOf(row);
}

/** The settings of each of these customers, by id. */
export async function singleSignOnOfEach(
  db: Db,
  customerIds: readonly string[],
): Promise<Map<string, SingleSignOnSettings>> {
  if (!customerIds.length) return new Map();
  const rows = await db
    .selectFrom('customers')
    .select(['id', 'sso_enabled', 'sso_domains'])
    .where('id', 'in', [...new Set(customerIds)])
    .execute();
  return new Map(rows.map((row) => [row.id, settingsOf(row)]));
}

export async function setSingleSignOn(trx: Trx, customerId: string, settings: SingleSignOnSettings): Promise<void> {
  await trx
    .updateTable('customers')
    .set({ sso_enabled: settings.enabled ? 1 : 0, sso_domains: JSON.stringify(settings.domains) })
    .where('id', '=', customerId)
    .execute();
}
