import type { Role } from '#protocol/roles';
import { type Selectable, sql } from 'kysely';
import type { Db, Trx } from '../database.js';
import type { Dialect } from '../store/db.js';
import { queryShape } from '../store/query-shape.js';
import type { ConsoleSessionTable, ConsoleUserTable } from './console.table.js';

export type ConsoleUserRow = Selectable<ConsoleUserTable>;
export type ConsoleSessionRow = Selectable<ConsoleSessionTable>;

/** Invited and not yet in: no password chosen, and the link not used (one who signs in with single sign-on uses none). */
export const isInvited = (row: Pick<ConsoleUserRow, 'password_hash' | 'welcome_hash'>): boolean =>
  row.password_hash === null && row.welcome_hash !== null;

/** Someone invited signed in with single sign-on: the invitation is used up, as its link would be. */
export async function acceptInvitation(trx: Trx, userId: string): Promise<void> {
  await trx
    .updateTable('console_users')
    .set({ welcome_hash: null, welcome_expires_at: null })
    .where('id', '=', userId)
    .execute();
}

/** Console accounts one address may have, at most: one per team it is in. */
export const ACCOUNTS_PER_ADDRESS = 10;

/** The accounts an address has (one per team it is in), the most recently signed in first. */
export async function findUsersByEmail(db: Db, email: string): Promise<ConsoleUserRow[]> {
  return db
    .selectFrom('console_users')
    .selectAll()
    .where('email', '=', email)
    .orderBy((eb) => eb.fn.coalesce('last_sign_in_at', 'created_at'), 'desc')
    .orderBy('id')
    .limit(ACCOUNTS_PER_ADDRESS)
    .execute();
}

/** A customer's console user with this address. */
export async function findTeamUserByEmail(
  db: Db,
  customerId: string,
  email: string,
): Promise<ConsoleUserRow | undefined> {
  return db
    .selectFrom('console_users')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('email', '=', email)
    .executeTakeFirst();
}

/** The console users an identity provider's subject is linked to. */
export async function linkedUsers(db: Db, issuer: string, subject: string): Promise<ConsoleUserRow[]> {
  return db
    .selectFrom('console_identities')
    .innerJoin('console_users', 'console_users.id', 'console_identities.user_id')
    .selectAll('console_users')
    .where('console_identities.issuer', '=', issuer)
    .where('console_identities.subject', '=', subject)
    .orderBy((eb) => eb.fn.coalesce('console_users.last_sign_in_at', 'console_users.created_at'), 'desc')
    .execute();
}

/** Links a subject of the identity provider to a console user, once. */
export async function linkIdentity(trx: Trx, link: { issuer: string; subject: string; userId: string }): Promise<void> {
  await trx
    .insertInto('console_identities')
    .values({ issuer: link.issuer, subject: link.subject, user_id: link.userId, created_at: new Date().toISOString() })
    .onConflict((oc) => oc.columns(['issuer', 'subject', 'user_id']).doNothing())
    .execute();
}

/** Whether a console user has a subject of `issuer` linked. */
export async function hasIdentity(db: Db, userId: string, issuer: string): Promise<boolean> {
  const row = await db
    .selectFrom('console_identities')
    .select('user_id')
    .where('user_id', '=', userId)
    .where('issuer', '=', issuer)
    .executeTakeFirst();
  return row !== undefined;
}

export async function findUserById(db: Db, id: string): Promise<ConsoleUserRow | undefined> {
  return db.selectFrom('console_users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findUserByWelcome(db: Db, welcomeHash: string): Promise<ConsoleUserRow | undefined> {
  return db.selectFrom('console_users').selectAll().where('welcome_hash', '=', welcomeHash).executeTakeFirst();
}

export async function insertUser(db: Db, row: ConsoleUserRow): Promise<void> {
  await db.insertInto('console_users').values(row).execute();
}

export async function setWelcome(
  db: Db,
  userId: string,
  welcomeHash: string,
  expiresAt: string,
  role?: Role,
): Promise<void> {
  await db
    .updateTable('console_users')
    .set({ welcome_hash: welcomeHash, welcome_expires_at: expiresAt, ...(role ? { role } : {}) })
    .where('id', '=', userId)
    .execute();
}

/**
 * Sets the password once: only while the welcome is still the one presented, so a link cannot be
 * used twice even by two racing requests. The user's sessions end with it: a new link is how a
 * lost or stolen password is replaced, and what was signed in with the old one must not stay.
 */
export async function claimWelcome(
  db: Db,
  userId: string,
  welcomeHash: string,
  passwordHash: string,
  also: (trx: Trx) => Promise<void>,
): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable('console_users')
      .set({ password_hash: passwordHash, welcome_hash: null, welcome_expires_at: null })
      .where('id', '=', userId)
      .where('welcome_hash', '=', welcomeHash)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return false;
    await trx.deleteFrom('console_sessions').where('user_id', '=', userId).execute();
    await also(trx);
    return true;
  });
}

/** Opens a session and notes the sign-in; expired sessions of anyone go at the same time (they are few). */
/** A new session, in one transaction with what else the sign-in does (its audit record, a subject linked). */
export async function openSession(
  db: Db,
  row: ConsoleSessionRow,
  now: string,
  also: (trx: Trx) => Promise<void>,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('console_sessions').where('expires_at', '<', now).execute();
    await trx.insertInto('console_sessions').values(row).execute();
    await trx.updateTable('console_users').set({ last_sign_in_at: now }).where('id', '=', row.user_id).execute();
    await also(trx);
  });
}

/** A session with its user's address and role, read again on every request: a changed role counts at once. */
const sessionShape = queryShape((db, v: { tokenHash: string }) =>
  db
    .selectFrom('console_sessions')
    .innerJoin('console_users', 'console_users.id', 'console_sessions.user_id')
    .selectAll('console_sessions')
    .select(['console_users.email', 'console_users.role'])
    .where('token_hash', '=', v.tokenHash),
);

export async function findSession(
  db: Db,
  tokenHash: string,
): Promise<(ConsoleSessionRow & { email: string; role: Role }) | undefined> {
  return (await sessionShape(db, { tokenHash }))[0];
}

export async function touchSession(db: Db, tokenHash: string, at: string): Promise<void> {
  await db.updateTable('console_sessions').set({ last_seen_at: at }).where('token_hash', '=', tokenHash).execute();
}

export async function deleteSession(db: Db, tokenHash: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('token_hash', '=', tokenHash).execute();
}

/** Any two values, so long as nothing else takes this advisory lock: it serializes the sign-in ledger of every node. */
const SIGN_IN_LEDGER_LOCK = 0x5167_6e49;

/**
 * Runs `work` in a transaction that no other sign-in's ledger transaction overlaps, on any node:
 * SQLite's single connection runs one transaction at a time, and on PostgreSQL
 * an advisory lock held to the commit does the same. Counting and noting an attempt is then one step.
 */
export async function inSignInLedger<T>(db: Db, dialect: Dialect, work: (trx: Trx) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(${SIGN_IN_LEDGER_LOCK})`.execute(trx);
    return work(trx);
  });
}

/** Sign-in attempts since `since` for this email and from this address, oldest first. */
export async function countAttempts(
  trx: Trx,
  email: string,
  address: string,
  since: string,
): Promise<{ byEmail: string[]; byAddress: string[] }> {
  const rows = await trx
    .selectFrom('console_sign_in_failures')
    .select(['email', 'address', 'at'])
    .where('at', '>=', since)
    .where((eb) => eb.or([eb('email', '=', email), eb('address', '=', address)]))
    .orderBy('at')
    .execute();
  return {
    byEmail: rows.filter((r) => r.email === email).map((r) => r.at),
    byAddress: rows.filter((r) => r.address === address).map((r) => r.at),
  };
}

/** Notes an attempt; those from before `before` go at the same time. */
export async function noteAttempt(
  trx: Trx,
  row: { id: string; email: string; address: string; at: string },
  before: string,
): Promise<void> {
  await trx.deleteFrom('console_sign_in_failures').where('at', '<', before).execute();
  await trx.insertInto('console_sign_in_failures').values(row).execute();
}

/** An attempt that signed in, or whose password was never checked, is not a failure. */
export async function forgetAttempt(db: Db, id: string): Promise<void> {
  await db.deleteFrom('console_sign_in_failures').where('id', '=', id).execute();
}

/** Replaces a password's hash by one of the current cost, unless the password changed meanwhile. */
export async function rehashPassword(db: Db, userId: string, from: string, to: string): Promise<void> {
  await db
    .updateTable('console_users')
    .set({ password_hash: to })
    .where('id', '=', userId)
    .where('password_hash', '=', from)
    .execute();
}

/** A team member's role (README, Your team): the team service decides who may change it. */
export async function setRole(trx: Trx, id: string, role: Role): Promise<void> {
  await trx.updateTable('console_users').set({ role }).where('id', '=', id).execute();
}

/** Removes the user; their sessions end in the same step. */
export async function deleteUser(trx: Trx, id: string): Promise<void> {
  await trx.deleteFrom('console_sessions').where('user_id', '=', id).execute();
  await trx.deleteFrom('console_users').where('id', '=', id).execute();
}
