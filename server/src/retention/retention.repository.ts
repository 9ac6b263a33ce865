import type { Db } from '../store/database.js';

/**
 * Ended conversations last changed before `before`, oldest first. On PostgreSQL the rows are
 * locked, or skipped when another node holds them, so nodes purging at once split the work.
 */
export async function claimExpiredConversations(trx: Db, before: string, limit: number, skipLocked: boolean): Promise<string[]> {
  const rows = await trx
    .selectFrom('conversations')
    .select('id')
    .where('status', '=', 'ended')
    .where('updated_at', '<', before)
    .orderBy('updated_at')
    .limit(limit)
    .$if(skipLocked, (qb) => qb.forUpdate().skipLocked())
    .execute();
  return rows.map((r) => r.id);
}

/** Deletes conversations with everything of theirs: events and turns (by cascade) and transcript events. */
export async function deleteConversations(trx: Db, ids: readonly string[]): Promise<void> {
  if (!ids.length) return;
  await trx.deleteFrom('transcript_outbox').where('conversation_id', 'in', ids).execute();
  await trx.deleteFrom('conversations').where('id', 'in', ids).execute();
}

/** Deletes up to `limit` transcript events delivered before `before`; returns how many. */
export async function deleteDeliveredEvents(trx: Db, before: string, limit: number, skipLocked: boolean): Promise<number> {
  const rows = await trx
    .deleteFrom('transcript_outbox')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('transcript_outbox')
        .select('id')
        .where('status', '=', 'delivered')
        .where('created_at', '<', before)
        .orderBy('created_at')
        .limit(limit)
        .$if(skipLocked, (qb) => qb.forUpdate().skipLocked()),
    )
    .returning('id')
    .execute();
  return rows.length;
}
