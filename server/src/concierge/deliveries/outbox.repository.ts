import type { Db, Trx } from '../../database.js';
import type { Dialect } from '../../store/db.js';
import type { TranscriptOutboxTable } from './outbox.table.js';

/** Transcript events waiting to be delivered, and the age of the oldest in seconds (0 with none). */
export async function outboxBacklog(db: Db): Promise<{ backlog: number; oldestAgeS: number }> {
  const row = await db
    .selectFrom('transcript_outbox')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('created_at').as('oldest')])
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return {
    backlog: Number(row.n),
    oldestAgeS: row.oldest ? Math.max(0, (Date.now() - Date.parse(row.oldest)) / 1000) : 0,
  };
}

/**
 * Queues a change's transcript events, in order. The first is its conversation's head when
 * nothing of the conversation is pending. Call in the transaction that took the conversation's
 * next seqs (appendEvents), which holds the conversation's row lock: a settle promoting the next
 * head takes the same lock, so the two never both miss a new event.
 */
export async function insertOutbox(trx: Trx, rows: Omit<TranscriptOutboxTable, 'is_head'>[]): Promise<void> {
  const first = rows[0];
  if (!first) return;
  const waiting = await trx
    .selectFrom('transcript_outbox')
    .select('id')
    .where('conversation_id', '=', first.conversation_id)
    .where('status', '=', 'pending')
    .limit(1)
    .executeTakeFirst();
  await trx
    .insertInto('transcript_outbox')
    .values(rows.map((row, i) => ({ ...row, is_head: i === 0 && !waiting ? 1 : 0 })))
    .execute();
}

/**
 * Leases the due heads of the conversations' queues (see `is_head`), so each is sent by one node
 * at a time and a conversation's events go in order; the cost is that of the heads, not of any
 * conversation's backlog. On PostgreSQL rows another node is claiming are skipped, not waited for.
 */
export async function claimOutboxHeads(
  db: Db,
  now: string,
  leaseUntil: string,
  limit: number,
  dialect: Dialect,
): Promise<TranscriptOutboxTable[]> {
  return db
    .updateTable('transcript_outbox')
    .set({ lease_expires_at: leaseUntil })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('transcript_outbox as o')
        .select('o.id')
        .where('o.is_head', '=', 1)
        .where('o.next_attempt_at', '<=', now)
        // A disabled target's events wait, in order, until it is enabled again.
        .where('o.deployment_id', 'not in', (d) =>
          d.selectFrom('deployments').select('id').where('transcript_hook_status', '=', 'disabled'),
        )
        .where((w) => w.or([w('o.lease_expires_at', 'is', null), w('o.lease_expires_at', '<', now)]))
        .orderBy('o.next_attempt_at')
        .limit(limit)
        .$if(dialect === 'postgres', (qb) => qb.forUpdate().skipLocked()),
    )
    .returningAll()
    .execute();
}

/**
 * Settles a head's attempt; false when the event is gone (its conversation erased meanwhile). An
 * event no longer pending hands the head to its conversation's next pending event, under the
 * conversation's row lock (on PostgreSQL; SQLite runs one transaction at a time).
 */
export async function settleOutbox(
  trx: Trx,
  row: Pick<TranscriptOutboxTable, 'id' | 'conversation_id'>,
  patch: Pick<TranscriptOutboxTable, 'status' | 'attempts' | 'next_attempt_at'>,
  dialect: Dialect,
): Promise<boolean> {
  if (patch.status === 'pending') {
    const result = await trx
      .updateTable('transcript_outbox')
      .set({ ...patch, lease_expires_at: null })
      .where('id', '=', row.id)
      .executeTakeFirst();
    return result.numUpdatedRows > 0n;
  }
  if (dialect === 'postgres')
    await trx.selectFrom('conversations').select('id').where('id', '=', row.conversation_id).forUpdate().execute();
  const result = await trx
    .updateTable('transcript_outbox')
    .set({ ...patch, lease_expires_at: null, is_head: 0 })
    .where('id', '=', row.id)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) return false;
  await trx
    .updateTable('transcript_outbox')
    .set({ is_head: 1 })
    .where('id', '=', (eb) =>
      eb
        .selectFrom('transcript_outbox')
        .select('id')
        .where('conversation_id', '=', row.conversation_id)
        .where('status', '=', 'pending')
        .orderBy('position')
        .orderBy('id')
        .limit(1),
    )
    .execute();
  return true;
}

/** A dead event that reached its receiver after all (a redelivery) is delivered. */
export async function reviveDeadEvent(db: Db, id: string): Promise<void> {
  await db
    .updateTable('transcript_outbox')
    .set({ status: 'delivered', lease_expires_at: null })
    .where('id', '=', id)
    .where('status', '=', 'dead')
    .execute();
}

/** Makes a deployment's waiting heads due now (its target was enabled again after backing off). */
export async function headsDueNow(db: Db, deploymentId: string, now: string): Promise<void> {
  await db
    .updateTable('transcript_outbox')
    .set({ next_attempt_at: now })
    .where('deployment_id', '=', deploymentId)
    .where('is_head', '=', 1)
    .where('next_attempt_at', '>', now)
    .execute();
}
