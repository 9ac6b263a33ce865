import { sql } from 'kysely';
import type { Db } from '../database.js';
import { type FieldKind, jsonArrayText, jsonRowOf } from '../store/json-shape.js';
import { queryShapes } from '../store/query-shape.js';
import type { Agent } from './agent.schemas.js';
import type { AgentStatus, AgentTable } from './agent.table.js';
import type { Page } from '../store/page.js';
import { containing, offsetOf } from '../store/listing.js';

/** The public agent, field by field, as read from its columns: the one place the two meet. */
export const AGENT_SHAPE = {
  id: 'value',
  name: 'value',
  description: 'value',
  status: 'value',
  version: 'value',
  agent_spec: 'json',
  draft_spec: 'json',
  generated_spec: 'json',
  test_mode_enabled: 'flag',
  created_at: 'value',
  updated_at: 'value',
  project_id: 'value',
  knowledge_base_id: 'value',
} as const satisfies Record<keyof Agent, FieldKind>;

export type AgentRow = AgentTable;
/** Status is changed only through {@link transitionAgent}, which keeps the counts right. */
export type AgentPatch = Partial<Omit<AgentRow, 'id' | 'customer_id' | 'created_at' | 'status'>>;

export interface AgentFilter {
  status?: AgentStatus | undefined;
  search?: string | undefined;
}

async function addToCount(db: Db, customerId: string, status: AgentStatus, delta: number): Promise<void> {
  await db
    .insertInto('agent_counts')
    .values({ customer_id: customerId, status, count: delta })
    .onConflict((oc) =>
      oc
        .columns(['customer_id', 'status'])
        .doUpdateSet((eb) => ({ count: eb('agent_counts.count', '+', eb.ref('excluded.count')) })),
    )
    .execute();
}

/** Call inside a transaction: the row and its count change together. */
export async function insertAgent(db: Db, row: AgentRow): Promise<void> {
  await db.insertInto('agents').values(row).execute();
  await addToCount(db, row.customer_id, row.status, 1);
}

export async function findAgent(db: Db, customerId: string, id: string): Promise<AgentRow | undefined> {
  return db
    .selectFrom('agents')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Without the tenant check: for background work that already holds a tenant-scoped row. */
export async function findAgentById(db: Db, id: string): Promise<AgentRow | undefined> {
  return db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
}

interface ListValues extends Record<string, unknown> {
  customerId: string;
  status: AgentStatus | undefined;
  pattern: string | undefined;
  limit: number;
  offset: number;
}

/** Which filters a list request uses: the key of its compiled shapes (the values are bound). */
interface FilterKey {
  byStatus: boolean;
  bySearch: boolean;
}

const filterKey = (filter: AgentFilter): FilterKey => ({
  byStatus: Boolean(filter.status),
  bySearch: Boolean(filter.search),
});

function filtered(db: Db, key: FilterKey, v: ListValues) {
  let query = db.selectFrom('agents').where('customer_id', '=', v.customerId);
  if (key.byStatus) query = query.where('status', '=', v.status!);
  if (key.bySearch) query = query.where(sql<boolean>`search_text like ${v.pattern} escape ${sql.lit('\\')}`);
  return query;
}

// The list page is the management API's hottest read: its two queries are compiled once per filter combination.
const pageShapes = queryShapes(
  (key: FilterKey) => (db, v: ListValues) =>
    filtered(db, key, v)
      .select(jsonRowOf(db, AGENT_SHAPE).as('item'))
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(v.limit)
      .offset(v.offset),
);

const countShapes = queryShapes((key: FilterKey) => (db, v: ListValues) => {
  if (key.bySearch) return filtered(db, key, v).select((eb) => eb.fn.countAll<number | string>().as('total'));
  let query = db
    .selectFrom('agent_counts')
    .select((eb) => eb.fn.sum<number | string | null>('count').as('total'))
    .where('customer_id', '=', v.customerId);
  if (key.byStatus) query = query.where('status', '=', v.status!);
  return query;
});

/** A page of agents as a JSON array text (each row built by the database) and the filter's total. */
export async function listAgentsJson(
  db: Db,
  customerId: string,
  filter: AgentFilter,
  page: Page,
): Promise<{ items: string; total: number }> {
  const key = filterKey(filter);
  const values: ListValues = {
    customerId,
    status: filter.status,
    pattern: filter.search ? containing(filter.search.toLowerCase()) : undefined,
    limit: page.per_page,
    offset: offsetOf(page),
  };
  const [rows, [count]] = await Promise.all([pageShapes(key, db, values), countShapes(key, db, values)]);
  return { items: jsonArrayText(rows.map((row) => row.item)), total: Number(count?.total ?? 0) };
}

export async function updateAgent(db: Db, customerId: string, id: string, patch: AgentPatch): Promise<void> {
  await db.updateTable('agents').set(patch).where('customer_id', '=', customerId).where('id', '=', id).execute();
}

/**
 * Moves an agent from `from` to `to` (with the rest of `patch`) only if it is still in `from`,
 * so a racing writer cannot be overwritten. Call inside a transaction. True when it moved.
 */
export async function transitionAgent(
  db: Db,
  id: string,
  from: AgentStatus,
  to: AgentStatus,
  patch: AgentPatch,
): Promise<boolean> {
  const moved = await db
    .updateTable('agents')
    .set({ ...patch, status: to })
    .where('id', '=', id)
    .where('status', '=', from)
    .returning('customer_id')
    .executeTakeFirst();
  if (!moved) return false;
  if (from !== to) {
    await addToCount(db, moved.customer_id, from, -1);
    await addToCount(db, moved.customer_id, to, 1);
  }
  return true;
}

/** Call inside a transaction: the row and its count change together. */
export async function deleteAgent(db: Db, customerId: string, id: string): Promise<void> {
  const gone = await db
    .deleteFrom('agents')
    .where('customer_id', '=', customerId)
    .where('id', '=', id)
    .returning('status')
    .executeTakeFirst();
  if (gone) await addToCount(db, customerId, gone.status, -1);
}

/** An agent is not deleted while a deployment of it is live. */
export async function countActiveDeploymentsOfAgent(db: Db, agentId: string): Promise<number> {
  const row = await db
    .selectFrom('deployments')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('agent_id', '=', agentId)
    .where('status', '=', 'active')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
