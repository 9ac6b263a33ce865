import type { Db, Trx } from '../database.js';
import type { ConsoleUserRow } from '../console/console-account.repository.js';

/** A customer's console users, by address. */
export async function listUsers(db: Db, customerId: string): Promise<ConsoleUserRow[]> {
  return db.selectFrom('console_users').selectAll().where('customer_id', '=', customerId).orderBy('email').execute();
}

export async function findTeamUser(db: Db, customerId: string, id: string): Promise<ConsoleUserRow | undefined> {
  return db
    .selectFrom('console_users')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * The customer's owners who are in (an invited owner may never come, so does not count), locked to
 * the end of `trx` on PostgreSQL: two owners demoting each other at once cannot both see the other
 * still there. (SQLite runs one transaction at a time.)
 */
export async function lockOwners(trx: Trx, customerId: string, dialect: 'sqlite' | 'postgres'): Promise<string[]> {
  let query = trx
    .selectFrom('console_users')
    .select('id')
    .where('customer_id', '=', customerId)
    .where('role', '=', 'owner')
    // Not invited (see isInvited): a password chosen, or no link outstanding.
    .where((eb) => eb.or([eb('password_hash', 'is not', null), eb('welcome_hash', 'is', null)]));
  if (dialect === 'postgres') query = query.forUpdate();
  return (await query.execute()).map((row) => row.id);
}
