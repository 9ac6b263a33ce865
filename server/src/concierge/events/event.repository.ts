import type { Database, Db, Trx } from '../../database.js';
import { isoNow } from '../../shared/time.js';
import { queryShapes } from '../../store/query-shape.js';
import type { NewEvent, StoredEvent } from '#protocol/frames';

/** A stored widget event: `frame` is the exact JSON text sent. */
export interface StoredFrame {
  seq: number;
  type: StoredEvent['type'];
  frame: string;
  /** The event itself, where this node wrote it: a socket's voice reads it without parsing `frame` again. */
  event?: StoredEvent;
}

/** The conversation's columns a change may set with its events. */
export type ConversationPatch = Partial<
  Pick<
    Database['conversations'],
    | 'status'
    | 'end_reason'
    | 'ended_at'
    | 'turn_count'
    | 'handler'
    | 'handler_name'
    | 'needs_person'
    | 'handoff_reason'
    | 'handoff_at'
    | 'wait_told_at'
    | 'page_event_at'
  >
>;

/**
 * Stores events with the conversation's next seqs. Taking the seqs updates (and so locks) the
 * conversation row, which orders concurrent writers: hence the transaction.
 * Returns the frames stored, and the seq the first one got (or would have got).
 */
export async function appendEvents(
  trx: Trx,
  conversationId: string,
  events: readonly NewEvent[],
  patch: ConversationPatch = {},
): Promise<{ first: number; frames: StoredFrame[] }> {
  const now = isoNow();
  const columns = (Object.keys(patch) as (keyof typeof patch)[]).filter((c) => patch[c] !== undefined).sort();
  const values: Record<string, unknown> = { conversationId, count: events.length, now };
  for (const column of columns) values[`set_${column}`] = patch[column];
  const [row] = await nextSeqShapes({ columns }, trx, values);
  // Callers hold the conversation's lock: a missing row is a bug, never a 0 to number from.
  if (!row) throw new Error(`appendEvents: no conversation ${conversationId}`);
  const { last_seq } = row;
  const first = last_seq - events.length + 1;
  const frames = framesOf(events, first);
  if (frames.length) {
    const rows: Record<string, unknown> = { conversationId, now };
    frames.forEach((f, i) => Object.assign(rows, { [`seq${i}`]: f.seq, [`type${i}`]: f.type, [`frame${i}`]: f.frame }));
    await insertEventShapes({ count: frames.length }, trx, rows);
  }
  return { first, frames };
}

/** Events as frames, numbered from `first`. */
export const framesOf = (events: readonly NewEvent[], first: number): StoredFrame[] =>
  events.map(({ type, ...body }, i): StoredFrame => {
    const event = { type, seq: first + i, ...body } as StoredEvent;
    return { seq: event.seq, type, frame: JSON.stringify(event), event };
  });

/** The conversations' stored events, as a socket reads back what it missed. */
export const storedFrames = (db: Db) => ({
  framesAfter: (conversationId: string, seq: number, limit: number) => framesAfter(db, conversationId, seq, limit),
});

/**
 * Stored events after `seq`, at most `limit`, in order; undefined when the conversation itself
 * is gone (erased), told apart in the same read.
 */
export async function framesAfter(
  db: Db,
  conversationId: string,
  seq: number,
  limit: number,
): Promise<StoredFrame[] | undefined> {
  const rows = await db
    .selectFrom('conversations as c')
    .leftJoin('conversation_events as e', (join) => join.onRef('e.conversation_id', '=', 'c.id').on('e.seq', '>', seq))
    .select(['e.seq', 'e.type', 'e.frame'])
    .where('c.id', '=', conversationId)
    .orderBy('e.seq')
    .limit(limit)
    .execute();
  if (!rows.length) return undefined;
  return rows.flatMap((r) =>
    r.seq === null || r.type === null || r.frame === null ? [] : [{ seq: r.seq, type: r.type, frame: r.frame }],
  );
}

/** The conversation's next seqs (and its patched columns): one compiled shape per set of columns. */
const nextSeqShapes = queryShapes(({ columns }: { columns: readonly (keyof ConversationPatch)[] }) => {
  return (db, v: Record<string, unknown>) => {
    const patch: Record<string, unknown> = {};
    for (const column of columns) patch[column] = v[`set_${column}`];
    return db
      .updateTable('conversations')
      .set((eb) => ({ ...patch, last_seq: eb('last_seq', '+', v.count as number), updated_at: v.now as string }))
      .where('id', '=', v.conversationId as string)
      .returning('last_seq');
  };
});

/** The events of one change: one compiled shape per number of events (one or two in practice). */
const insertEventShapes = queryShapes(
  ({ count }: { count: number }) =>
    (db, v: Record<string, unknown>) =>
      db.insertInto('conversation_events').values(
        Array.from({ length: count }, (_, i) => ({
          conversation_id: v.conversationId as string,
          seq: v[`seq${i}`] as number,
          type: v[`type${i}`] as StoredFrame['type'],
          frame: v[`frame${i}`] as string,
          created_at: v.now as string,
        })),
      ),
);

/** Of these conversations, the ones changed at or after `since`, or erased (the bus's catch-up). */
export async function conversationsUpdatedSince(db: Db, ids: readonly string[], since: string): Promise<string[]> {
  const changed: string[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    const chunk = ids.slice(i, i + 500);
    const rows = await db.selectFrom('conversations').select(['id', 'updated_at']).where('id', 'in', chunk).execute();
    const updated = new Map(rows.map((r) => [r.id, r.updated_at]));
    changed.push(...chunk.filter((id) => (updated.get(id) ?? since) >= since));
  }
  return changed;
}

/** What was said in a conversation, its last `limit` visitor turns, replies and person messages, oldest first. */
export async function recentTalk(db: Db, conversationId: string, limit: number): Promise<StoredFrame[]> {
  const rows = await db
    .selectFrom('conversation_events')
    .select(['seq', 'type', 'frame'])
    .where('conversation_id', '=', conversationId)
    .where('type', 'in', ['turn_accepted', 'reply', 'message'])
    .orderBy('seq', 'desc')
    .limit(limit)
    .execute();
  return rows.reverse();
}
