import { type ExpressionBuilder, sql } from 'kysely';
import type { Database, Db } from '../../database.js';
import type { Dialect } from '../../store/db.js';
import type { ConversationEventTable } from '../events/event.table.js';
import type { TurnRow } from '../conversations/turn.repository.js';
import type { ConversationRow } from '../conversations/conversation.repository.js';
import type { ConversationFilter } from './conversation.schemas.js';
import type { Page } from '../../store/page.js';
import { containing, listed, type Listed, offsetOf } from '../../store/listing.js';

export type HistoryRow = ConversationRow & {
  failed_turn_count: number | string;
  waiting_turns: number | string;
  /** The last event that says something (a turn, a reply, a person's message), as stored. */
  last_said: string | null;
};

/** The events a conversation's preview may quote. */
const SAYING: ConversationEventTable['type'][] = ['turn_accepted', 'reply', 'message'];
/** The history's queries name the conversations table `c`. */
type WithC = ExpressionBuilder<Database & { c: ConversationRow }, 'c'>;

const FAILED: TurnRow['status'][] = ['failed', 'expired'];

/**
 * The ids of conversations with a turn text or reply containing `search`, ignoring case. SQLite
 * asks its FTS5 trigram index with a quoted phrase (a run of trigrams: a substring), which takes 3
 * characters at least; shorter searches, and PostgreSQL (whose pg_trgm indexes serve ILIKE), match
 * the texts themselves.
 */
function matching(eb: WithC, dialect: Dialect, search: string) {
  if (dialect === 'sqlite' && [...search].length >= 3) {
    const phrase = `"${search.replace(/"/g, '""')}"`;
    return eb(
      'c.id',
      'in',
      sql<string>`(SELECT conversation_id FROM turn_search_rows WHERE rowid IN (SELECT rowid FROM turn_search WHERE turn_search MATCH ${phrase}))`,
    );
  }
  const pattern = containing(search);
  const like = dialect === 'postgres' ? sql`ILIKE` : sql`LIKE`;
  return eb(
    'c.id',
    'in',
    sql<string>`(SELECT conversation_id FROM turns WHERE text ${like} ${pattern} ESCAPE '\\' OR reply_text ${like} ${pattern} ESCAPE '\\')`,
  );
}

/** A failed or expired turn, or a transcript event given up on: sets read from their state indexes, small however long the history. */
function failing(eb: WithC) {
  return eb.or([
    eb('c.id', 'in', eb.selectFrom('turns').select('turns.conversation_id').where('turns.status', 'in', FAILED)),
    eb(
      'c.id',
      'in',
      eb
        .selectFrom('transcript_outbox')
        .select('transcript_outbox.conversation_id')
        .where('transcript_outbox.status', '=', 'dead'),
    ),
  ]);
}

/** A search, or failures, name few conversations: the list starts from them, not from the customer's whole history. */
const ledByMatches = (filter: ConversationFilter): boolean =>
  filter.search !== undefined || filter.has_failures === true;

function filtered(db: Db, dialect: Dialect, customerId: string, filter: ConversationFilter) {
  // Matches lead, looked up by id. SQLite would rather walk the customer's whole history and test
  // each against them, unless its index on the customer is ruled out (a unary +); PostgreSQL
  // weighs both by its statistics.
  const led = dialect === 'sqlite' && ledByMatches(filter);
  let query = db
    .selectFrom('conversations as c')
    .where(led ? sql<string>`+c.customer_id` : sql.ref<string>('c.customer_id'), '=', customerId);
  if (filter.deployment_id) query = query.where('c.deployment_id', '=', filter.deployment_id);
  if (filter.agent_id) query = query.where('c.agent_id', '=', filter.agent_id);
  if (filter.status) query = query.where('c.status', '=', filter.status);
  if (filter.handler) query = query.where('c.handler', '=', filter.handler);
  if (filter.needs_person !== undefined) query = query.where('c.needs_person', '=', filter.needs_person ? 1 : 0);
  if (filter.preview !== undefined) query = query.where('c.preview', '=', filter.preview ? 1 : 0);
  if (filter.user_sub) query = query.where('c.user_sub', '=', filter.user_sub);
  if (filter.created_after) query = query.where('c.created_at', '>=', filter.created_after);
  if (filter.created_before) query = query.where('c.created_at', '<', filter.created_before);
  if (filter.search) {
    const search = filter.search;
    query = query.where((eb) => matching(eb, dialect, search));
  }
  for (const [kind, match] of [
    ['criterion', filter.criterion],
    ['field', filter.field],
  ] as const)
    if (match)
      query = query.where('c.id', 'in', (eb) =>
        eb
          .selectFrom('conversation_analysis_values as v')
          .select('v.conversation_id')
          .where('v.customer_id', '=', customerId)
          .where('v.kind', '=', kind)
          .where('v.name', '=', match.name)
          .where('v.value', '=', match.value),
      );
  if (filter.has_failures !== undefined) {
    const wanted = filter.has_failures;
    query = query.where((eb) => (wanted ? failing(eb) : eb.not(failing(eb))));
  }
  return query;
}

function withFailedCount(db: Db, dialect: Dialect, customerId: string, filter: ConversationFilter) {
  return filtered(db, dialect, customerId, filter)
    .selectAll('c')
    .select((eb) =>
      eb
        .selectFrom('turns as t')
        .select((e) => e.fn.countAll<number | string>().as('n'))
        .whereRef('t.conversation_id', '=', 'c.id')
        .where('t.status', 'in', FAILED)
        .as('failed_turn_count'),
    )
    .select((eb) =>
      eb
        .selectFrom('turns as t')
        .select((e) => e.fn.countAll<number | string>().as('n'))
        .whereRef('t.conversation_id', '=', 'c.id')
        .where('t.status', '=', 'acknowledged')
        .as('waiting_turns'),
    )
    .select((eb) =>
      eb
        .selectFrom('conversation_events as e')
        .select('e.frame')
        .whereRef('e.conversation_id', '=', 'c.id')
        .where('e.type', 'in', SAYING)
        .orderBy('e.seq', 'desc')
        .limit(1)
        .as('last_said'),
    )
    .orderBy('c.created_at', 'desc')
    .orderBy('c.id', 'desc');
}

export async function listConversations(
  db: Db,
  dialect: Dialect,
  customerId: string,
  filter: ConversationFilter,
  page: Page,
): Promise<Listed<HistoryRow>> {
  const counting = filtered(db, dialect, customerId, filter).select((eb) =>
    eb.fn.countAll<number | string>().as('total'),
  );
  if (ledByMatches(filter)) {
    // The matches are found once, for the page and its total alike (a page past the end counts them again).
    const counted = await withFailedCount(db, dialect, customerId, filter)
      .select((eb) => eb.fn.countAll<number | string>().over().as('total'))
      .limit(page.per_page)
      .offset(offsetOf(page))
      .execute();
    const total = counted.length ? Number(counted[0]!.total) : Number((await counting.executeTakeFirstOrThrow()).total);
    return { rows: counted.map(({ total: _, ...row }) => row) as HistoryRow[], total };
  }
  const { rows, total } = await listed(page, withFailedCount(db, dialect, customerId, filter), counting);
  return { rows: rows as HistoryRow[], total };
}

/** Where a walk through the history stopped: the last conversation it gave, newest first. */
export interface HistoryCursor {
  created_at: string;
  id: string;
}

/** The next `limit` conversations after `after` (keyset, newest first): an export reads any number without an offset's rescans. */
export async function conversationsAfter(
  db: Db,
  dialect: Dialect,
  customerId: string,
  filter: ConversationFilter,
  after: HistoryCursor | undefined,
  limit: number,
): Promise<HistoryRow[]> {
  let query = withFailedCount(db, dialect, customerId, filter);
  if (after)
    query = query.where((eb) =>
      eb.or([
        eb('c.created_at', '<', after.created_at),
        eb.and([eb('c.created_at', '=', after.created_at), eb('c.id', '<', after.id)]),
      ]),
    );
  return (await query.limit(limit).execute()) as HistoryRow[];
}

export async function findHistoryRow(
  db: Db,
  dialect: Dialect,
  customerId: string,
  id: string,
): Promise<HistoryRow | undefined> {
  return (await withFailedCount(db, dialect, customerId, {}).where('c.id', '=', id).executeTakeFirst()) as
    HistoryRow | undefined;
}

/** The turns of these conversations, each conversation's oldest first. */
export async function turnsOf(db: Db, conversationIds: readonly string[]): Promise<TurnRow[]> {
  if (!conversationIds.length) return [];
  return db
    .selectFrom('turns')
    .selectAll()
    .where('conversation_id', 'in', [...conversationIds])
    .orderBy('conversation_id')
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/** The stored widget events of these conversations, each conversation's in seq order. */
export async function eventsOf(
  db: Db,
  conversationIds: readonly string[],
): Promise<Pick<ConversationEventTable, 'conversation_id' | 'seq' | 'frame'>[]> {
  if (!conversationIds.length) return [];
  return db
    .selectFrom('conversation_events')
    .select(['conversation_id', 'seq', 'frame'])
    .where('conversation_id', 'in', [...conversationIds])
    .orderBy('conversation_id')
    .orderBy('seq')
    .execute();
}

/** The analyses of these conversations, done ones only, by conversation. */
export async function analysesOf(db: Db, ids: readonly string[]): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  const rows = await db
    .selectFrom('conversation_analyses')
    .select(['conversation_id', 'analysis'])
    .where('conversation_id', 'in', ids)
    .where('status', '=', 'done')
    .execute();
  return new Map(rows.filter((r) => r.analysis).map((r) => [r.conversation_id, r.analysis!]));
}
