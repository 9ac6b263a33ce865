import type { Db, Trx } from '../../database.js';
import { queryShape } from '../../store/query-shape.js';
import { isoNow } from '../../shared/time.js';
import type { ConversationTable } from './conversation.table.js';

export type ConversationRow = ConversationTable;

export async function insertConversation(db: Db, row: ConversationRow): Promise<void> {
  await db.insertInto('conversations').values(row).execute();
}

/** How many conversations `sub` started on the deployment at or after `since`. */
export async function conversationsStartedSince(
  db: Db,
  deploymentId: string,
  sub: string,
  since: string,
): Promise<number> {
  const row = await db
    .selectFrom('conversations')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('deployment_id', '=', deploymentId)
    .where('user_sub', '=', sub)
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Open conversations across the store (the metrics' gauge; the status index answers it). */
export async function countOpenConversations(db: Db): Promise<number> {
  const row = await db
    .selectFrom('conversations')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'open')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function findConversation(db: Db, id: string): Promise<ConversationRow | undefined> {
  return db.selectFrom('conversations').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function openConversationIds(db: Db, deploymentId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('conversations')
    .select('id')
    .where('deployment_id', '=', deploymentId)
    .where('status', '=', 'open')
    .execute();
  return rows.map((r) => r.id);
}

/** Takes the conversation's row lock first, so one conversation's changes happen one at a time; undefined once it is erased. */
export async function lockConversation(trx: Trx, id: string): Promise<ConversationRow | undefined> {
  const [row] = await lockShape(trx, { id, now: isoNow() });
  return row;
}

const lockShape = queryShape((db, v: { id: string; now: string }) =>
  db.updateTable('conversations').set({ updated_at: v.now }).where('id', '=', v.id).returningAll(),
);

/** Deletes conversations with everything of theirs: events and turns (by cascade), transcript events and delivery records. */
export async function deleteConversations(trx: Trx, ids: readonly string[]): Promise<void> {
  if (!ids.length) return;
  await trx.deleteFrom('transcript_outbox').where('conversation_id', 'in', ids).execute();
  await trx.deleteFrom('deliveries').where('conversation_id', 'in', ids).execute();
  await trx.deleteFrom('conversations').where('id', 'in', ids).execute();
}

/** Where a walk through the requests for a person stopped: the last one read, in (handoff_at, id) order. */
export interface WaitingCursor {
  handoff_at: string;
  id: string;
}

/**
 * Open conversations whose request for a person has waited since before `before` with nobody
 * taking it, and whose visitor has not been told (or set aside) since it was made; oldest request
 * first, after `after`.
 */
export async function requestsWaitingSince(
  db: Db,
  before: string,
  after: WaitingCursor | undefined,
  limit: number,
): Promise<ConversationRow[]> {
  let query = db
    .selectFrom('conversations')
    .selectAll()
    .where('needs_person', '=', 1)
    .where('handoff_at', '<=', before)
    .where('status', '=', 'open')
    .where('handler', '=', 'agent')
    .where((eb) => eb.or([eb('wait_told_at', 'is', null), eb('wait_told_at', '<', eb.ref('handoff_at'))]));
  if (after)
    query = query.where((eb) =>
      eb.or([
        eb('handoff_at', '>', after.handoff_at),
        eb.and([eb('handoff_at', '=', after.handoff_at), eb('id', '>', after.id)]),
      ]),
    );
  return query.orderBy('handoff_at').orderBy('id').limit(limit).execute();
}

/**
 * Sets a request for a person aside without telling anyone (its deployment tells nothing): it
 * leaves the walk. Not under the conversation's lock, which would count as activity; a request
 * made again since is not touched.
 */
export async function setWaitAside(db: Db, id: string, handoffAt: string, at: string): Promise<void> {
  await db
    .updateTable('conversations')
    .set({ wait_told_at: at })
    .where('id', '=', id)
    .where('handoff_at', '=', handoffAt)
    .execute();
}

/** The call of a tool that needs the visitor's word, as the model proposed it (JSON), or none once it ran. */
export async function setToolConfirmation(trx: Trx, id: string, proposed: string | null): Promise<void> {
  await trx.updateTable('conversations').set({ tool_confirmation: proposed }).where('id', '=', id).execute();
}

/** The spec a test run's conversations are answered by (README, Tests and analysis). */
export async function testRunSpec(db: Db, runId: string): Promise<string | null> {
  const run = await db.selectFrom('agent_test_runs').select('spec').where('id', '=', runId).executeTakeFirst();
  return run?.spec ?? null;
}

/**
 * Queues the analysis of a conversation that ends (README, Tests and analysis), once: one with no
 * turns, or a test run's, is not analysed.
 */
export async function queueAnalysisOfEnded(trx: Trx, conversationId: string, now: string): Promise<void> {
  await trx
    .insertInto('conversation_analyses')
    .columns([
      'conversation_id',
      'customer_id',
      'agent_id',
      'agent_version',
      'status',
      'attempts',
      'due_at',
      'updated_at',
    ])
    .expression((eb) =>
      eb
        .selectFrom('conversations')
        .select((s) => [
          'id',
          'customer_id',
          'agent_id',
          'agent_version',
          s.val('queued').as('status'),
          s.val(0).as('attempts'),
          s.val(now).as('due_at'),
          s.val(now).as('updated_at'),
        ])
        .where('id', '=', conversationId)
        .where('test_run_id', 'is', null)
        .where('turn_count', '>', 0),
    )
    .onConflict((oc) => oc.column('conversation_id').doNothing())
    .execute();
}
