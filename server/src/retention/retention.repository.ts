import { sql } from 'kysely';
import type { Trx } from '../database.js';
import type { Dialect } from '../store/db.js';

/**
 * Ended conversations last changed before `before`, oldest first. On PostgreSQL the rows are
 * locked, or skipped when another node holds them, so nodes purging at once split the work.
 */
export async function claimExpiredConversations(
  trx: Trx,
  before: string,
  limit: number,
  dialect: Dialect,
): Promise<string[]> {
  const rows = await trx
    .selectFrom('conversations')
    .select('id')
    .where('status', '=', 'ended')
    .where('updated_at', '<', before)
    .orderBy('updated_at')
    .limit(limit)
    .$if(dialect === 'postgres', (qb) => qb.forUpdate().skipLocked())
    .execute();
  return rows.map((r) => r.id);
}

/** What expires by age alone: rows of a table in one state, older than a cutoff on one column. */
const aging = {
  /** Transcript events delivered. */
  deliveredEvents: { table: 'transcript_outbox', column: 'status', value: 'delivered', aged: 'created_at' },
  /** Records of calls outside any conversation (tests of a hook). */
  testDeliveries: { table: 'deliveries', column: 'kind', value: 'test', aged: 'sent_at' },
} as const;

/** Deletes up to `limit` of `what`, oldest first, aged before `before`; returns how many. */
export async function deleteAged(
  trx: Trx,
  what: keyof typeof aging,
  before: string,
  limit: number,
  dialect: Dialect,
): Promise<number> {
  const { table, column, value, aged } = aging[what];
  const claim = dialect === 'postgres' ? sql` FOR UPDATE SKIP LOCKED` : sql``;
  const result = await sql`DELETE FROM ${sql.table(table)} WHERE id IN (
      SELECT id FROM ${sql.table(table)} WHERE ${sql.ref(column)} = ${value} AND ${sql.ref(aged)} < ${before} ORDER BY ${sql.ref(aged)} LIMIT ${limit}${claim})`.execute(
    trx,
  );
  return Number(result.numAffectedRows ?? 0);
}
