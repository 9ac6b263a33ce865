import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { Database, Db } from '../store/database.js';
import { isoNow } from '../shared/time.js';
import type {
  ConversationTable,
  TranscriptOutboxTable,
  TurnFailure,
  TurnStatus,
  TurnTable,
} from './conversation.table.js';

export type ConversationRow = ConversationTable;
export type TurnRow = TurnTable;

/** A stored widget event: `frame` is the exact JSON text sent. */
export interface StoredFrame {
  seq: number;
  type: string;
  frame: string;
}

export interface NewEvent {
  type: string;
  /** The frame's fields besides `type` and `seq`. */
  body: Record<string, unknown>;
}

export async function insertConversation(db: Db, row: ConversationRow): Promise<void> {
  await db.insertInto('conversations').values(row).execute();
}

/** How many conversations `sub` started on the deployment at or after `since`. */
export async function conversationsStartedSince(db: Db, deploymentId: string, sub: string, since: string): Promise<number> {
  const row = await db
    .selectFrom('conversations')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('deployment_id', '=', deploymentId)
    .where('user_sub', '=', sub)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findConversation(db: Db, id: string): Promise<ConversationRow | undefined> {
  return db.selectFrom('conversations').selectAll().where('id', '=', id).executeTakeFirst();
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
  patch: Partial<Pick<ConversationRow, 'status' | 'turn_count'>> = {},
): Promise<{ first: number; frames: StoredFrame[] }> {
  const now = isoNow();
  const { last_seq } = await db
    .updateTable('conversations')
    .set((eb) => ({ ...patch, last_seq: eb('last_seq', '+', events.length), updated_at: now }))
    .where('id', '=', conversationId)
    .returning('last_seq')
    .executeTakeFirstOrThrow();
  const first = last_seq - events.length + 1;
  const frames = events.map((event, i) => ({ seq: first + i, type: event.type, frame: JSON.stringify({ type: event.type, seq: first + i, ...event.body }) }));
  if (frames.length) {
    await db
      .insertInto('conversation_events')
      .values(frames.map((f) => ({ conversation_id: conversationId, ...f, created_at: now })))
      .execute();
  }
  return { first, frames };
}

export async function framesAfter(db: Db, conversationId: string, seq: number, limit: number): Promise<StoredFrame[]> {
  return db
    .selectFrom('conversation_events')
    .select(['seq', 'type', 'frame'])
    .where('conversation_id', '=', conversationId)
    .where('seq', '>', seq)
    .orderBy('seq')
    .limit(limit)
    .execute();
}

export interface TurnScope {
  turnId: string;
  conversationId: string;
  deploymentId: string;
}

/** One turn by id, or, given a scope, only if it belongs to that conversation of that deployment. */
function isTurn(eb: ExpressionBuilder<Database, 'turns'>, turn: string | TurnScope): Expression<SqlBool> {
  if (typeof turn === 'string') return eb('id', '=', turn);
  return eb.and([
    eb('id', '=', turn.turnId),
    eb('conversation_id', '=', turn.conversationId),
    eb.exists(eb.selectFrom('conversations').select('id').where('id', '=', turn.conversationId).where('deployment_id', '=', turn.deploymentId)),
  ]);
}

export async function findTurnOf(db: Db, scope: TurnScope): Promise<TurnRow | undefined> {
  return db.selectFrom('turns').selectAll().where((eb) => isTurn(eb, scope)).executeTakeFirst();
}

export async function findTurnByClientId(db: Db, conversationId: string, clientTurnId: string): Promise<TurnRow | undefined> {
  return db.selectFrom('turns').selectAll().where('conversation_id', '=', conversationId).where('client_turn_id', '=', clientTurnId).executeTakeFirst();
}

export async function insertTurn(db: Db, row: TurnRow): Promise<void> {
  await db.insertInto('turns').values(row).execute();
}

/** In one read: the conversation's turns still waiting (in `open` states), and those created since `since`. */
export async function turnLoad(db: Db, conversationId: string, open: readonly TurnStatus[], since: string): Promise<{ waiting: number; recent: number }> {
  const row = await db
    .selectFrom('turns')
    .select((eb) => [
      eb.fn.sum<number | string | null>(eb.case().when('status', 'in', open).then(1).else(0).end()).as('waiting'),
      eb.fn.sum<number | string | null>(eb.case().when('created_at', '>=', since).then(1).else(0).end()).as('recent'),
    ])
    .where('conversation_id', '=', conversationId)
    .executeTakeFirstOrThrow();
  return { waiting: Number(row.waiting ?? 0), recent: Number(row.recent ?? 0) };
}

/**
 * Moves a turn from `from` to `to` only if it is still in `from` (and, given a scope, belongs to
 * it): of two racing writers (a reply and the expiry sweep, say) exactly one wins.
 * Returns the turn as it was moved, or undefined.
 */
export async function transitionTurn(db: Db, turn: string | TurnScope, from: TurnStatus, to: TurnStatus, patch: Partial<TurnRow> = {}): Promise<TurnRow | undefined> {
  return db
    .updateTable('turns')
    .set({ ...patch, status: to, updated_at: isoNow() })
    .where((eb) => isTurn(eb, turn))
    .where('status', '=', from)
    .returningAll()
    .executeTakeFirst();
}

/** Fails every turn of the conversation still in one of `open`; returns their ids, oldest first. */
export async function failOpenTurns(db: Db, conversationId: string, open: readonly TurnStatus[], reason: TurnFailure): Promise<string[]> {
  const rows = await db
    .updateTable('turns')
    .set({ status: 'failed', failure_reason: reason, updated_at: isoNow() })
    .where('conversation_id', '=', conversationId)
    .where('status', 'in', open)
    .returning(['id', 'created_at'])
    .execute();
  return rows.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0)).map((r) => r.id);
}

export async function openConversationIds(db: Db, deploymentId: string): Promise<string[]> {
  const rows = await db.selectFrom('conversations').select('id').where('deployment_id', '=', deploymentId).where('status', '=', 'open').execute();
  return rows.map((r) => r.id);
}

export interface DueTurns {
  status: TurnStatus;
  column: 'expires_at' | 'created_at';
  before: string;
  limit: number;
}

/** Turns whose time is up in `status` before `before`, oldest first, with their conversation and deployment. */
export async function dueTurns(db: Db, due: DueTurns): Promise<{ id: string; conversation_id: string; deployment_id: string }[]> {
  return db
    .selectFrom('turns')
    .innerJoin('conversations', 'conversations.id', 'turns.conversation_id')
    .select(['turns.id', 'turns.conversation_id', 'conversations.deployment_id'])
    .where('turns.status', '=', due.status)
    .where(`turns.${due.column}`, '<', due.before)
    .orderBy(`turns.${due.column}`)
    .limit(due.limit)
    .execute();
}

/**
 * Claims a turn still in `status` inside the caller's transaction. On PostgreSQL the row is
 * locked, or skipped if another node holds it (`FOR UPDATE SKIP LOCKED`), so nodes sweeping at
 * once split the work instead of queueing on each other; SQLite has one writer, so there the
 * read is the claim.
 */
export async function claimTurn(trx: Db, id: string, status: TurnStatus, skipLocked: boolean): Promise<boolean> {
  const row = await trx
    .selectFrom('turns')
    .select('id')
    .where('id', '=', id)
    .where('status', '=', status)
    .$if(skipLocked, (qb) => qb.forUpdate().skipLocked())
    .executeTakeFirst();
  return Boolean(row);
}

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

export async function settleOutbox(db: Db, id: string, patch: Pick<TranscriptOutboxTable, 'status' | 'attempts' | 'next_attempt_at'>): Promise<void> {
  await db.updateTable('transcript_outbox').set({ ...patch, lease_expires_at: null }).where('id', '=', id).execute();
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
