import type { Db, Trx } from '../../database.js';
import type { PageData } from '#protocol/proactive';

/** A page event as a turn's responder is told it. */
export interface PageEvent {
  name: string;
  data?: PageData;
  at: string;
}

/** The page's context of a conversation of a deployment (README, Greeting visitors first): replaced whole. */
export async function setPageContext(db: Db, conversationId: string, deploymentId: string, context: string) {
  await db
    .updateTable('conversations')
    .set({ page_context: context })
    .where('id', '=', conversationId)
    .where('deployment_id', '=', deploymentId)
    .execute();
}

/** The greeting rule that approached the visitor, kept while their conversation has no turn yet. */
export async function setProactiveRule(trx: Trx, conversationId: string, rule: string): Promise<void> {
  await trx
    .updateTable('conversations')
    .set({ proactive_rule: rule })
    .where('id', '=', conversationId)
    .where('turn_count', '=', 0)
    .execute();
}

/** Rows read back to find a turn's page events: the turn is among the newest, just taken. */
const LOOK_BACK = 60;

/**
 * The page events stored between the turn before this one and this one, oldest first, the
 * newest `limit` of them: what the page did since the visitor last spoke.
 */
export async function pageEventsBefore(
  db: Db,
  conversationId: string,
  turnId: string,
  limit: number,
): Promise<PageEvent[]> {
  const rows = await db
    .selectFrom('conversation_events')
    .select(['type', 'frame', 'created_at'])
    .where('conversation_id', '=', conversationId)
    .where('type', 'in', ['turn_accepted', 'page_event'])
    .orderBy('seq', 'desc')
    .limit(LOOK_BACK)
    .execute();
  const events: PageEvent[] = [];
  let found = false;
  for (const row of rows) {
    const frame = JSON.parse(row.frame) as { turn_id?: string; name?: string; data?: PageData };
    if (!found) {
      found = row.type === 'turn_accepted' && frame.turn_id === turnId;
      continue;
    }
    if (row.type === 'turn_accepted' || events.length === limit) break;
    events.unshift({
      name: frame.name!,
      ...(frame.data === undefined ? {} : { data: frame.data }),
      at: row.created_at,
    });
  }
  return events;
}

/** How many page events a conversation holds, and how many of them came since `since`. */
export async function pageEventLoad(
  trx: Trx,
  conversationId: string,
  since: string,
): Promise<{ total: number; recent: number }> {
  const row = await trx
    .selectFrom('conversation_events')
    .where('conversation_id', '=', conversationId)
    .where('type', '=', 'page_event')
    .select((eb) => [
      eb.fn.countAll<number | string>().as('total'),
      eb.fn.sum<number | string | null>(eb.case().when('created_at', '>', since).then(1).else(0).end()).as('recent'),
    ])
    .executeTakeFirstOrThrow();
  return { total: Number(row.total), recent: Number(row.recent ?? 0) };
}
