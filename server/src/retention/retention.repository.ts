import { sql } from 'kysely';
import type { Db, Trx } from '../database.js';
import { fromJsonColumn } from '../shared/json-column.js';
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
  deploymentId?: string,
): Promise<string[]> {
  const rows = await trx
    .selectFrom('conversations')
    .select('id')
    .where('status', '=', 'ended')
    .where('updated_at', '<', before)
    .$if(deploymentId !== undefined, (qb) => qb.where('deployment_id', '=', deploymentId!))
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

/** Deployments that keep their ended conversations fewer days than they say (README, Privacy: what is kept), and how many. */
export async function deploymentRetentions(db: Db): Promise<{ deploymentId: string; days: number }[]> {
  const rows = await db
    .selectFrom('deployments')
    .select(['id', 'runtime_config'])
    .where('runtime_config', 'like', '%retention_days%')
    .execute();
  return rows.flatMap((row) => {
    const days = fromJsonColumn<{ privacy?: { retention_days?: unknown } }>(row.runtime_config)?.privacy
      ?.retention_days;
    return typeof days === 'number' && days > 0 ? [{ deploymentId: row.id, days }] : [];
  });
}
