import type { Db } from '../../store/database.js';
import type { TranscriptOutboxTable } from './outbox.table.js';

export async function insertOutbox(db: Db, row: TranscriptOutboxTable): Promise<void> {
  await db.insertInto('transcript_outbox').values(row).execute();
}

/**
 * Leases the transcript events that are next in their conversation and due, so each is sent by
 * one node at a time and a conversation's events go in order (an event whose predecessor is
 * still pending, leased elsewhere or not, is not a head and waits). On PostgreSQL rows another
 * node is claiming are skipped, not waited for.
 */
export async function claimOutboxHeads(db: Db, now: string, leaseUntil: string, limit: number, skipLocked: boolean): Promise<TranscriptOutboxTable[]> {
  return db
    .updateTable('transcript_outbox')
    .set({ lease_expires_at: leaseUntil })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('transcript_outbox as o')
        .select('o.id')
        .where('o.status', '=', 'pending')
        .where('o.next_attempt_at', '<=', now)
        .where((w) => w.or([w('o.lease_expires_at', 'is', null), w('o.lease_expires_at', '<', now)]))
        .where((w) =>
          w.not(
            w.exists(
              w
                .selectFrom('transcript_outbox as p')
                .select('p.id')
                .where('p.conversation_id', '=', w.ref('o.conversation_id'))
                .where('p.status', '=', 'pending')
                .where('p.position', '<', w.ref('o.position')),
            ),
          ),
        )
        .orderBy('o.created_at')
        .limit(limit)
        .$if(skipLocked, (qb) => qb.forUpdate().skipLocked()),
    )
    .returningAll()
    .execute();
}

/** False when the event is gone (its conversation erased meanwhile). */
export async function settleOutbox(db: Db, id: string, patch: Pick<TranscriptOutboxTable, 'status' | 'attempts' | 'next_attempt_at'>): Promise<boolean> {
  const result = await db.updateTable('transcript_outbox').set({ ...patch, lease_expires_at: null }).where('id', '=', id).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** A dead event that reached its receiver after all (a redelivery) is delivered. */
export async function reviveDeadEvent(db: Db, id: string): Promise<void> {
  await db.updateTable('transcript_outbox').set({ status: 'delivered', lease_expires_at: null }).where('id', '=', id).where('status', '=', 'dead').execute();
}
