import type { Db, Trx } from '../../database.js';
import type { ConversationAnalysisTable, ConversationAnalysisValueTable } from './analysis.table.js';

export type AnalysisRow = ConversationAnalysisTable;

/** Queues a conversation's analysis once: a conversation analysed (or queued) already is left as it is. */
export async function queueAnalysis(
  trx: Trx | Db,
  row: Pick<AnalysisRow, 'conversation_id' | 'customer_id' | 'agent_id' | 'agent_version' | 'due_at'>,
): Promise<void> {
  await trx
    .insertInto('conversation_analyses')
    // Named one by one: a row read elsewhere, with more columns, cannot slip them into the insert.
    .values({
      conversation_id: row.conversation_id,
      customer_id: row.customer_id,
      agent_id: row.agent_id,
      agent_version: row.agent_version,
      due_at: row.due_at,
      status: 'queued',
      attempts: 0,
      lease_expires_at: null,
      analysis: null,
      error: null,
      updated_at: row.due_at,
    })
    .onConflict((oc) => oc.column('conversation_id').doNothing())
    .execute();
}

/**
 * Open conversations quiet since before `before` with no analysis yet, a test run's left out
 * (README, Tests and analysis), in the order they went quiet, after `after`: each look reads on
 * from the last, never the whole history again.
 */
export async function quietConversations(
  db: Db,
  after: { updated_at: string; id: string },
  before: string,
  limit: number,
) {
  return db
    .selectFrom('conversations as c')
    .select([
      'c.id',
      'c.id as conversation_id',
      'c.customer_id',
      'c.agent_id',
      'c.deployment_id',
      'c.agent_version',
      'c.test_run_id',
      'c.updated_at',
    ])
    .where('c.status', '=', 'open')
    .where('c.updated_at', '<', before)
    .where((eb) =>
      eb.or([
        eb('c.updated_at', '>', after.updated_at),
        eb.and([eb('c.updated_at', '=', after.updated_at), eb('c.id', '>', after.id)]),
      ]),
    )
    .where('c.test_run_id', 'is', null)
    .where('c.turn_count', '>', 0)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('conversation_analyses as a')
            .select('a.conversation_id')
            .whereRef('a.conversation_id', '=', 'c.id'),
        ),
      ),
    )
    .orderBy('c.updated_at')
    .orderBy('c.id')
    .limit(limit)
    .execute();
}

/**
 * Analyses due now, and running ones whose node stopped renewing their lease (it died), but those
 * of the customers in `busy`.
 */
export async function claimableAnalyses(
  db: Db,
  now: string,
  limit: number,
  busy: readonly string[],
): Promise<AnalysisRow[]> {
  let query = db.selectFrom('conversation_analyses').selectAll();
  if (busy.length) query = query.where('customer_id', 'not in', busy);
  return query
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'queued'), eb('due_at', '<=', now)]),
        eb.and([eb('status', '=', 'running'), eb('lease_expires_at', '<', now)]),
      ]),
    )
    .orderBy('due_at')
    .limit(limit)
    .execute();
}

/** Compare-and-set on the row as read (like agent generation's jobs): of several nodes, exactly one claims it. */
export async function claimAnalysis(db: Db, seen: AnalysisRow, leaseUntil: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('conversation_analyses')
    .set({ status: 'running', attempts: seen.attempts + 1, lease_expires_at: leaseUntil, updated_at: now })
    .where('conversation_id', '=', seen.conversation_id)
    .where('status', '=', seen.status)
    .where('attempts', '=', seen.attempts)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Settles a claimed analysis, only while the claim (its attempt) is still this node's: a node whose
 * lease passed and whose work another took over writes nothing. False when the claim was lost.
 */
export async function settleAnalysis(
  trx: Trx | Db,
  claimed: Pick<AnalysisRow, 'conversation_id'> & { attempts: number },
  patch: Pick<AnalysisRow, 'status' | 'analysis' | 'error' | 'due_at' | 'updated_at'>,
): Promise<boolean> {
  const result = await trx
    .updateTable('conversation_analyses')
    .set({ ...patch, lease_expires_at: null })
    .where('conversation_id', '=', claimed.conversation_id)
    .where('status', '=', 'running')
    .where('attempts', '=', claimed.attempts)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Hands running analyses back at a stop, the attempt given back: the next start takes them at once. */
export async function releaseAnalyses(db: Db, ids: string[], now: string): Promise<void> {
  if (!ids.length) return;
  await db
    .updateTable('conversation_analyses')
    .set((eb) => ({ status: 'queued', attempts: eb('attempts', '-', 1), lease_expires_at: null, updated_at: now }))
    .where('conversation_id', 'in', ids)
    .where('status', '=', 'running')
    .execute();
}

export async function insertAnalysisValues(trx: Trx, rows: ConversationAnalysisValueTable[]): Promise<void> {
  if (rows.length) await trx.insertInto('conversation_analysis_values').values(rows).execute();
}
