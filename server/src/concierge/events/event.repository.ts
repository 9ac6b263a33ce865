import type { Db } from '../../store/database.js';
import { isoNow } from '../../shared/time.js';
import type { ConversationRow } from '../conversations/conversation.repository.js';
import type { NewEvent, StoredEvent } from '../protocol/frames.js';

/** A stored widget event: `frame` is the exact JSON text sent. */
export interface StoredFrame {
  seq: number;
  type: StoredEvent['type'];
  frame: string;
}

/**
 * Stores events with the conversation's next seqs. Call inside a transaction: taking the seqs
 * updates (and so locks) the conversation row, which orders concurrent writers.
 * Returns the frames stored, and the seq the first one got (or would have got).
 */
export async function appendEvents(
  db: Db,
  conversationId: string,
  events: readonly NewEvent[],
  patch: Partial<Pick<ConversationRow, 'status' | 'end_reason' | 'ended_at' | 'turn_count'>> = {},
): Promise<{ first: number; frames: StoredFrame[] }> {
  const now = isoNow();
  const { last_seq } = await db
    .updateTable('conversations')
    .set((eb) => ({ ...patch, last_seq: eb('last_seq', '+', events.length), updated_at: now }))
    .where('id', '=', conversationId)
    .returning('last_seq')
    .executeTakeFirstOrThrow();
  const first = last_seq - events.length + 1;
  const frames = events.map(({ type, ...body }, i) => ({ seq: first + i, type, frame: JSON.stringify({ type, seq: first + i, ...body }) }));
  if (frames.length) {
    await db
      .insertInto('conversation_events')
      .values(frames.map((f) => ({ conversation_id: conversationId, ...f, created_at: now })))
      .execute();
  }
  return { first, frames };
}

/**
 * Stored events after `seq`, at most `limit`, in order; undefined when the conversation itself
 * is gone (erased), told apart in the same read.
 */
export async function framesAfter(db: Db, conversationId: string, seq: number, limit: number): Promise<StoredFrame[] | undefined> {
  const rows = await db
    .selectFrom('conversations as c')
    .leftJoin('conversation_events as e', (join) => join.onRef('e.conversation_id', '=', 'c.id').on('e.seq', '>', seq))
    .select(['e.seq', 'e.type', 'e.frame'])
    .where('c.id', '=', conversationId)
    .orderBy('e.seq')
    .limit(limit)
    .execute();
  if (!rows.length) return undefined;
  return rows.flatMap((r) => (r.seq === null || r.type === null || r.frame === null ? [] : [{ seq: r.seq, type: r.type, frame: r.frame }]));
}
