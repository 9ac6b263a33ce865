import type { Db } from '../store/database.js';
import { isoNow } from '../shared/time.js';
import type {
  ConversationTable,
  TranscriptOutboxTable,
  TurnStatus,
  TurnTable,
} from './conversation.table.js';

export type ConversationRow = ConversationTable;
export type TurnRow = TurnTable;

export interface NewEvent {
  type: string;
  /** The frame's fields besides `type` and `seq`. */
  body: Record<string, unknown>;
}

export async function insertConversation(db: Db, row: ConversationRow): Promise<void> {
  await db.insertInto('conversations').values(row).execute();
}

export async function findConversation(db: Db, id: string): Promise<ConversationRow | undefined> {
  return db.selectFrom('conversations').selectAll().where('id', '=', id).executeTakeFirst();
}

/**
 * Stores events with the conversation's next seqs. Call inside a transaction: taking the seqs
 * updates (and so locks) the conversation row, which orders concurrent writers.
 * Returns the first seq given.
 */
export async function appendEvents(db: Db, conversationId: string, events: readonly NewEvent[], patch: Partial<Pick<ConversationRow, 'status' | 'turn_count'>> = {}): Promise<number> {
  const now = isoNow();
  const { last_seq } = await db
    .updateTable('conversations')
    .set((eb) => ({ ...patch, last_seq: eb('last_seq', '+', events.length), updated_at: now }))
    .where('id', '=', conversationId)
    .returning('last_seq')
    .executeTakeFirstOrThrow();
  const first = last_seq - events.length + 1;
  if (events.length) {
    await db
      .insertInto('conversation_events')
      .values(
        events.map((event, i) => ({
          conversation_id: conversationId,
          seq: first + i,
          type: event.type,
          frame: JSON.stringify({ type: event.type, seq: first + i, ...event.body }),
          created_at: now,
        })),
      )
      .execute();
  }
  return first;
}

export async function framesAfter(db: Db, conversationId: string, seq: number, limit = 500): Promise<{ seq: number; type: string; frame: string }[]> {
  return db
    .selectFrom('conversation_events')
    .select(['seq', 'type', 'frame'])
    .where('conversation_id', '=', conversationId)
    .where('seq', '>', seq)
    .orderBy('seq')
    .limit(limit)
    .execute();
}

export async function findTurn(db: Db, id: string): Promise<TurnRow | undefined> {
  return db.selectFrom('turns').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findTurnByClientId(db: Db, conversationId: string, clientTurnId: string): Promise<TurnRow | undefined> {
  return db.selectFrom('turns').selectAll().where('conversation_id', '=', conversationId).where('client_turn_id', '=', clientTurnId).executeTakeFirst();
}

export async function insertTurn(db: Db, row: TurnRow): Promise<void> {
  await db.insertInto('turns').values(row).execute();
}

export async function countTurns(db: Db, conversationId: string, filter: { statuses?: TurnStatus[]; since?: string }): Promise<number> {
  let query = db.selectFrom('turns').select((eb) => eb.fn.countAll<number | string>().as('n')).where('conversation_id', '=', conversationId);
  if (filter.statuses) query = query.where('status', 'in', filter.statuses);
  if (filter.since) query = query.where('created_at', '>=', filter.since);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

/**
 * Moves a turn from `from` to `to` only if it is still in `from`: of two racing writers (a reply
 * and the expiry sweep, say) exactly one wins. Returns the turn as it was moved, or undefined.
 */
export async function transitionTurn(db: Db, id: string, from: TurnStatus, to: TurnStatus, patch: Partial<TurnRow> = {}): Promise<TurnRow | undefined> {
  return db
    .updateTable('turns')
    .set({ ...patch, status: to, updated_at: isoNow() })
    .where('id', '=', id)
    .where('status', '=', from)
    .returningAll()
    .executeTakeFirst();
}

export async function openConversationIds(db: Db, deploymentId: string): Promise<string[]> {
  const rows = await db.selectFrom('conversations').select('id').where('deployment_id', '=', deploymentId).where('status', '=', 'open').execute();
  return rows.map((r) => r.id);
}

/** Turns whose time is up in `status` before `before`, oldest first. */
export async function dueTurnIds(db: Db, status: TurnStatus, column: 'expires_at' | 'created_at', before: string, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('turns').select('id').where('status', '=', status).where(column, '<', before).orderBy(column).limit(limit).execute();
  return rows.map((r) => r.id);
}

export async function insertOutbox(db: Db, row: TranscriptOutboxTable): Promise<void> {
  await db.insertInto('transcript_outbox').values(row).execute();
}

/** Of these conversations, the ones changed at or after `since` (the bus's catch-up). */
export async function conversationsUpdatedSince(db: Db, ids: readonly string[], since: string): Promise<string[]> {
  const changed: string[] = [];
  for (let i = 0; i < ids.length; i += 500) {
    const rows = await db.selectFrom('conversations').select('id').where('id', 'in', ids.slice(i, i + 500)).where('updated_at', '>=', since).execute();
    changed.push(...rows.map((r) => r.id));
  }
  return changed;
}
