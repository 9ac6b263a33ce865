import type { Db } from '../../database.js';

/** A stored widget event as the activity stream sends it. */
export interface ActivityEventRow {
  conversation_id: string;
  deployment_id: string;
  seq: number;
  frame: string;
  created_at: string;
}

/** A conversation's handling as the activity stream sends it. */
export interface HandoffRow {
  id: string;
  deployment_id: string;
  handler: string;
  handler_name: string | null;
  needs_person: 0 | 1;
  handoff_reason: string | null;
  handoff_at: string | null;
}

/**
 * The customer's widget events stored at or after `since`, oldest first, at most `limit`; only
 * conversations touched since are looked at (every event touches its conversation). With
 * `only`, that conversation's events after `afterSeq`.
 */
export async function activitySince(
  db: Db,
  customerId: string,
  since: string,
  limit: number,
  only?: { conversationId: string; afterSeq: number },
): Promise<ActivityEventRow[]> {
  let query = db
    .selectFrom('conversations as c')
    .innerJoin('conversation_events as e', 'e.conversation_id', 'c.id')
    .select(['e.conversation_id', 'c.deployment_id', 'e.seq', 'e.frame', 'e.created_at'])
    .where('c.customer_id', '=', customerId)
    .where('c.updated_at', '>=', since);
  query = query.where('e.created_at', '>=', since);
  if (only) query = query.where('c.id', '=', only.conversationId).where('e.seq', '>', only.afterSeq);
  return query.orderBy('e.created_at').orderBy('e.conversation_id').orderBy('e.seq').limit(limit).execute();
}

/** The customer's conversations whose handling changed at or after `since`. */
export async function handoffsSince(db: Db, customerId: string, since: string): Promise<HandoffRow[]> {
  return db
    .selectFrom('conversations')
    .select(['id', 'deployment_id', 'handler', 'handler_name', 'needs_person', 'handoff_reason', 'handoff_at'])
    .where('customer_id', '=', customerId)
    .where('updated_at', '>=', since)
    .where('handoff_at', '>=', since)
    .orderBy('handoff_at')
    .execute();
}

/** Whose a conversation is: its customer and deployment. */
export async function conversationOwner(
  db: Db,
  conversationId: string,
): Promise<{ customer_id: string; deployment_id: string } | undefined> {
  return db
    .selectFrom('conversations')
    .select(['customer_id', 'deployment_id'])
    .where('id', '=', conversationId)
    .executeTakeFirst();
}
