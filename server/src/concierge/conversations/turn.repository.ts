import type { Expression, ExpressionBuilder, SqlBool } from 'kysely';
import type { Database, Db, Trx } from '../../database.js';
import type { Dialect } from '../../store/db.js';
import { isoNow } from '../../shared/time.js';
import { queryShape, queryShapes, rowInserter } from '../../store/query-shape.js';
import type { ReplyPartTable, TurnFailure, TurnStatus, TurnTable } from './conversation.table.js';

export type TurnRow = TurnTable;
export type ReplyPartRow = ReplyPartTable;

/** The states in which a turn still waits for its answer. */
export const OPEN_TURN_STATUSES: readonly TurnStatus[] = ['pending', 'acknowledged'];

export interface TurnScope {
  turnId: string;
  conversationId: string;
  deploymentId: string;
}

/** One turn by id, or, given a scope, only if it belongs to that conversation of that deployment. */
export function isTurn(eb: ExpressionBuilder<Database, 'turns'>, turn: string | TurnScope): Expression<SqlBool> {
  if (typeof turn === 'string') return eb('id', '=', turn);
  return eb.and([
    eb('id', '=', turn.turnId),
    eb('conversation_id', '=', turn.conversationId),
    eb.exists(
      eb
        .selectFrom('conversations')
        .select('id')
        .where('id', '=', turn.conversationId)
        .where('deployment_id', '=', turn.deploymentId),
    ),
  ]);
}

/**
 * The turn as it is now, held until the caller's transaction ends (an update that changes
 * nothing takes the row's lock on PostgreSQL): writers of one turn's reply go one at a time.
 */
export async function lockTurnOf(trx: Trx, scope: TurnScope, dialect: Dialect): Promise<TurnRow | undefined> {
  // PostgreSQL locks the row and writes nothing. SQLite's unit begins with a write, so its transaction
  // holds the write lock from its first statement: a read first could not take it while another
  // connection (an admin command) writes.
  const [row] = await (dialect === 'postgres' ? lockTurnForUpdateShape : lockTurnShape)(trx, scope);
  return row;
}

const lockTurnForUpdateShape = queryShape((db, v: TurnScope) =>
  db
    .selectFrom('turns')
    .selectAll()
    .where((eb) => isTurn(eb, v))
    .forUpdate(),
);

const lockTurnShape = queryShape((db, v: TurnScope) =>
  db
    .updateTable('turns')
    .set((eb) => ({ status: eb.ref('status') }))
    .where((eb) => isTurn(eb, v))
    .returningAll(),
);

export async function turnExists(db: Db, id: string): Promise<boolean> {
  return Boolean(await db.selectFrom('turns').select('id').where('id', '=', id).executeTakeFirst());
}

export async function findTurnByClientId(
  db: Db,
  conversationId: string,
  clientTurnId: string,
): Promise<TurnRow | undefined> {
  const [row] = await byClientIdShape(db, { conversationId, clientTurnId });
  return row;
}

const byClientIdShape = queryShape((db, v: { conversationId: string; clientTurnId: string }) =>
  db
    .selectFrom('turns')
    .selectAll()
    .where('conversation_id', '=', v.conversationId)
    .where('client_turn_id', '=', v.clientTurnId),
);

export async function insertTurn(trx: Trx, row: TurnRow): Promise<void> {
  await insertTurns(trx, [row]);
}

const insertTurns = rowInserter('turns');

/** In one read: the conversation's turns still waiting (pending or acknowledged), and those created since `since`. */
export async function turnLoad(
  db: Db,
  conversationId: string,
  since: string,
): Promise<{ waiting: number; recent: number }> {
  const [row] = await turnLoadShape(db, { conversationId, since });
  return { waiting: Number(row?.waiting ?? 0), recent: Number(row?.recent ?? 0) };
}

const turnLoadShape = queryShape((db, v: { conversationId: string; since: string }) =>
  db
    .selectFrom('turns')
    .select((eb) => [
      eb.fn
        .sum<number | string | null>(eb.case().when('status', 'in', OPEN_TURN_STATUSES).then(1).else(0).end())
        .as('waiting'),
      eb.fn.sum<number | string | null>(eb.case().when('created_at', '>=', v.since).then(1).else(0).end()).as('recent'),
    ])
    .where('conversation_id', '=', v.conversationId),
);

/** What a move reads back of the turn it moved: what the move counts (the whole row is 54 columns). */
const MOVED_COLUMNS = ['status', 'created_at', 'resolved_at', 'first_part_at', 'failure_reason'] as const;
export type MovedTurn = Pick<TurnRow, (typeof MOVED_COLUMNS)[number]>;

/**
 * Moves a turn from `from` to `to` only if it is still in `from` (and, given a scope, belongs to
 * it): of two racing writers (a reply and the expiry sweep, say) exactly one wins.
 * Returns what the move counts of the turn as it was moved, or undefined.
 */
export async function transitionTurn(
  trx: Trx,
  turn: string | TurnScope,
  from: TurnStatus,
  to: TurnStatus,
  patch: Partial<TurnRow> = {},
): Promise<MovedTurn | undefined> {
  const columns = (Object.keys(patch) as (keyof TurnRow)[]).filter((c) => patch[c] !== undefined).sort();
  const byId = typeof turn === 'string';
  // Written out rather than spread: each property a literal adds after a spread takes V8's slow path (docs/performance.md).
  const values: TransitionValues = {
    turnId: byId ? turn : turn.turnId,
    conversationId: byId ? '' : turn.conversationId,
    deploymentId: byId ? '' : turn.deploymentId,
    from,
    to,
    now: isoNow(),
  };
  for (const column of columns) (values as Record<string, unknown>)[`set_${column}`] = patch[column];
  const [moved] = await transitionShapes({ by: byId ? 'id' : 'scope', columns }, trx, values);
  return moved;
}

/** What a transition binds: where, from and to, and a `set_<column>` for each column it patches. */
type TransitionValues = Pick<TurnScope, keyof TurnScope> & { from: TurnStatus; to: TurnStatus; now: string } & {
  [C in keyof TurnRow as `set_${C}`]?: TurnRow[C];
};

/** The turn transitions, one compiled shape per kind of turn reference and set of patched columns: the hottest statements of a turn. */
const transitionShapes = queryShapes(
  ({ by, columns }: { by: 'id' | 'scope'; columns: readonly (keyof TurnRow)[] }) =>
    (db, v: TransitionValues) => {
      const set: Partial<TurnRow> = { status: v.to, updated_at: v.now };
      for (const column of columns) Object.assign(set, { [column]: v[`set_${column}`] });
      return db
        .updateTable('turns')
        .set(set)
        .where((eb) => (by === 'id' ? eb('id', '=', v.turnId) : isTurn(eb, v)))
        .where('status', '=', v.from)
        .returning(MOVED_COLUMNS);
    },
);

export async function rateTurn(
  trx: Trx,
  id: string,
  feedback: Pick<TurnRow, 'feedback_rating' | 'feedback_comment' | 'feedback_at'>,
): Promise<void> {
  await trx.updateTable('turns').set(feedback).where('id', '=', id).execute();
}

/** The visitor's words in the turn before `turn` in its conversation, if there was one. */
/** What the visitor asked in the `count` turns before `turn`, the newest first. */
export async function textsBefore(
  db: Db,
  turn: Pick<TurnRow, 'conversation_id' | 'created_at' | 'id'>,
  count: number,
): Promise<string[]> {
  const earlier = await db
    .selectFrom('turns')
    .select('text')
    .where('conversation_id', '=', turn.conversation_id)
    .where('id', '!=', turn.id)
    .where('created_at', '<=', turn.created_at)
    .orderBy('created_at', 'desc')
    .limit(count)
    .execute();
  return earlier.map((t) => t.text);
}

export async function countDuplicateReply(trx: Trx, id: string): Promise<void> {
  await trx
    .updateTable('turns')
    .set((eb) => ({ reply_duplicates: eb('reply_duplicates', '+', 1) }))
    .where('id', '=', id)
    .execute();
}

export async function findReplyPart(trx: Trx, turnId: string, part: number): Promise<ReplyPartRow | undefined> {
  const [row] = await replyPartShape(trx, { turnId, part });
  return row;
}

const replyPartShape = queryShape((db, v: { turnId: string; part: number }) =>
  db.selectFrom('reply_parts').selectAll().where('turn_id', '=', v.turnId).where('part', '=', v.part),
);

/** Stores a part and counts it on its turn: its characters, the first part's time, and the reply's new due time. */
export async function addReplyPart(trx: Trx, row: ReplyPartRow, chars: number, replyDueAt: string): Promise<void> {
  await insertReplyParts(trx, [row]);
  await countPartShape(trx, { turnId: row.turn_id, chars, at: row.received_at, replyDueAt });
}

const insertReplyParts = rowInserter('reply_parts');

const countPartShape = queryShape((db, v: { turnId: string; chars: number; at: string; replyDueAt: string }) =>
  db
    .updateTable('turns')
    .set((eb) => ({
      part_chars: eb('part_chars', '+', v.chars),
      first_part_at: eb.fn.coalesce('first_part_at', eb.val(v.at)),
      expires_at: v.replyDueAt,
      updated_at: v.at,
    }))
    .where('id', '=', v.turnId),
);

/** The reply parts of these turns, each turn's in part order. */
export async function replyPartsOf(db: Db, turnIds: readonly string[]): Promise<ReplyPartRow[]> {
  if (!turnIds.length) return [];
  return db
    .selectFrom('reply_parts')
    .selectAll()
    .where('turn_id', 'in', [...turnIds])
    .orderBy('turn_id')
    .orderBy('part')
    .execute();
}

/** Fails every turn of the conversation still in one of `open`; returns their ids, oldest first. */
export async function failOpenTurns(
  trx: Trx,
  conversationId: string,
  open: readonly TurnStatus[],
  reason: TurnFailure,
): Promise<string[]> {
  const rows = await trx
    .updateTable('turns')
    .set({ status: 'failed', failure_reason: reason, updated_at: isoNow() })
    .where('conversation_id', '=', conversationId)
    .where('status', 'in', open)
    .returning(['id', 'created_at'])
    .execute();
  return rows.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0)).map((r) => r.id);
}

/** The knowledge base passages a turn was given, as its `knowledge` column keeps them for its detail (not their text: the chunks hold it). */
export function knowledgeColumn(
  passages: readonly { chunk_id: string; document_id: string; title: string; url: string | null; score: number }[],
): string {
  return JSON.stringify(
    passages.map(({ chunk_id, document_id, title, url, score }) => ({ chunk_id, document_id, title, url, score })),
  );
}
