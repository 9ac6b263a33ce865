import type { Db } from '../../database.js';
import { rowInserter } from '../../store/query-shape.js';
import type { DeliveryFilter } from './delivery.schemas.js';
import type { DeliveryTable } from './delivery.table.js';
import type { Page } from '../../store/page.js';
import { listed, type Listed } from '../../store/listing.js';

export type DeliveryRow = DeliveryTable;

export async function insertDeliveries(db: Db, rows: readonly DeliveryRow[]): Promise<void> {
  await insertRows(db, rows);
}

const insertRows = rowInserter('deliveries');

export async function findDelivery(db: Db, customerId: string, id: string): Promise<DeliveryRow | undefined> {
  return db
    .selectFrom('deliveries')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('id', '=', id)
    .executeTakeFirst();
}

function filtered(db: Db, customerId: string, filter: DeliveryFilter) {
  let query = db.selectFrom('deliveries').where('customer_id', '=', customerId);
  if (filter.deployment_id) query = query.where('deployment_id', '=', filter.deployment_id);
  if (filter.conversation_id) query = query.where('conversation_id', '=', filter.conversation_id);
  if (filter.kind) query = query.where('kind', '=', filter.kind);
  if (filter.outcome) query = query.where('outcome', '=', filter.outcome);
  if (filter.event_type) query = query.where('event_type', '=', filter.event_type);
  if (filter.since) query = query.where('sent_at', '>=', filter.since);
  return query;
}

export async function listDeliveries(
  db: Db,
  customerId: string,
  filter: DeliveryFilter,
  page: Page,
): Promise<Listed<DeliveryRow>> {
  const matching = filtered(db, customerId, filter);
  return listed(
    page,
    matching.selectAll().orderBy('sent_at', 'desc').orderBy('id', 'desc'),
    matching.select((eb) => eb.fn.countAll<number | string>().as('total')),
  );
}

/**
 * The calls made to answer these conversations' turns (hook attempts, model and tool calls), each
 * turn's in the order they were sent (read through the conversation index).
 */
export async function answerCallsOf(db: Db, conversationIds: readonly string[]): Promise<DeliveryRow[]> {
  if (!conversationIds.length) return [];
  return db
    .selectFrom('deliveries')
    .selectAll()
    .where('conversation_id', 'in', [...conversationIds])
    .where('kind', 'in', ['turn_hook', 'model', 'tool'])
    .orderBy('turn_id')
    .orderBy('sent_at')
    .orderBy('attempt')
    .execute();
}

/** The attempt number a further sending of this transcript event of this conversation gets. */
export async function nextEventAttempt(db: Db, conversationId: string, eventId: string): Promise<number> {
  const row = await db
    .selectFrom('deliveries')
    .select((eb) => eb.fn.max('attempt').as('last'))
    .where('conversation_id', '=', conversationId)
    .where('event_id', '=', eventId)
    .where('kind', '=', 'transcript')
    .executeTakeFirstOrThrow();
  return Number(row.last ?? 0) + 1;
}

/** The deployment's tests sent at or after `since`: their record ids and when they went. */
export async function manualSendsSince(
  db: Db,
  deploymentId: string,
  since: string,
): Promise<{ id: string; sentAt: string }[]> {
  const rows = await db
    .selectFrom('deliveries')
    .select(['id', 'sent_at'])
    .where('manual', '=', 1)
    .where('deployment_id', '=', deploymentId)
    .where('sent_at', '>=', since)
    .execute();
  return rows.map((r) => ({ id: r.id, sentAt: r.sent_at }));
}

/** Whether any transcript event reached the deployment's target since `since`. */
export async function transcriptSucceededSince(
  db: Db,
  customerId: string,
  deploymentId: string,
  since: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('deliveries')
    .select('id')
    .where('customer_id', '=', customerId)
    .where('sent_at', '>=', since)
    .where('deployment_id', '=', deploymentId)
    .where('kind', '=', 'transcript')
    .where('outcome', '=', 'succeeded')
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
