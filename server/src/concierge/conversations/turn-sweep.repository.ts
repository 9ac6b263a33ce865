import type { Db, Trx } from '../../database.js';
import type { Dialect } from '../../store/db.js';
import type { TurnStatus } from './conversation.table.js';
import type { TurnRow } from './turn.repository.js';

// The turns no visitor's message moves on: those whose time is up (the sweep), and those a silent node left half done (taken over).

export interface DueTurns {
  status: TurnStatus;
  column: 'expires_at' | 'created_at';
  before: string;
  limit: number;
}

/** Turns whose time is up in `status` before `before`, oldest first, with their conversation and deployment. */
export async function dueTurns(
  db: Db,
  due: DueTurns,
): Promise<{ id: string; conversation_id: string; deployment_id: string }[]> {
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
export async function claimTurn(trx: Trx, id: string, status: TurnStatus, dialect: Dialect): Promise<boolean> {
  const row = await trx
    .selectFrom('turns')
    .select('id')
    .where('id', '=', id)
    .where('status', '=', status)
    .$if(dialect === 'postgres', (qb) => qb.forUpdate().skipLocked())
    .executeTakeFirst();
  return Boolean(row);
}

/**
 * Turns a silent node left half done: pending (their hook called, or their responder started) or
 * acknowledged and being answered by that node itself (a model's reply), oldest first.
 */
export async function orphanedTurns(db: Db, me: string, silentSince: string, limit: number): Promise<TurnRow[]> {
  return db
    .selectFrom('turns')
    .selectAll()
    .where((eb) =>
      eb.or([eb('status', '=', 'pending'), eb.and([eb('status', '=', 'acknowledged'), eb('answering', '=', 1)])]),
    )
    .where('hook_node', 'is not', null)
    .where('hook_node', '!=', me)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('service_nodes')
            .select('service_nodes.id')
            .whereRef('service_nodes.id', '=', 'turns.hook_node')
            .where('service_nodes.heartbeat_at', '>=', silentSince),
        ),
      ),
    )
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

/** Moves a half-done turn from the silent node `from` to `to`; false when another node took it first, or it was answered. */
export async function takeOverTurn(db: Db, id: string, from: string, to: string): Promise<boolean> {
  const moved = await db
    .updateTable('turns')
    .set({ hook_node: to })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([eb('status', '=', 'pending'), eb.and([eb('status', '=', 'acknowledged'), eb('answering', '=', 1)])]),
    )
    .where('hook_node', '=', from)
    .executeTakeFirst();
  return Number(moved.numUpdatedRows) === 1;
}
