import { sql } from 'kysely';
import type { Db } from '../store/database.js';
import type { AgentStatus, AgentTable } from './agent.table.js';

export type AgentRow = AgentTable;
export type AgentPatch = Partial<Omit<AgentRow, 'id' | 'customer_id' | 'created_at'>>;

export interface AgentFilter {
  status?: AgentStatus | undefined;
  search?: string | undefined;
}

export async function insertAgent(db: Db, row: AgentRow): Promise<void> {
  await db.insertInto('agents').values(row).execute();
}

export async function findAgent(db: Db, customerId: string, id: string): Promise<AgentRow | undefined> {
  return db.selectFrom('agents').selectAll().where('customer_id', '=', customerId).where('id', '=', id).executeTakeFirst();
}

/** Without the tenant check: for background work that already holds a tenant-scoped row. */
export async function findAgentById(db: Db, id: string): Promise<AgentRow | undefined> {
  return db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
}

const likePattern = (needle: string): string => `%${needle.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function filtered(db: Db, customerId: string, filter: AgentFilter) {
  let query = db.selectFrom('agents').where('customer_id', '=', customerId);
  if (filter.status) query = query.where('status', '=', filter.status);
  if (filter.search) query = query.where(sql<boolean>`search_text like ${likePattern(filter.search)} escape ${sql.lit('\\')}`);
  return query;
}

export async function listAgents(
  db: Db,
  customerId: string,
  filter: AgentFilter,
  limit: number,
  offset: number,
): Promise<{ rows: AgentRow[]; total: number }> {
  const [rows, count] = await Promise.all([
    filtered(db, customerId, filter).selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).offset(offset).execute(),
    filtered(db, customerId, filter).select((eb) => eb.fn.countAll().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

export async function updateAgent(db: Db, customerId: string, id: string, patch: AgentPatch): Promise<void> {
  await db.updateTable('agents').set(patch).where('customer_id', '=', customerId).where('id', '=', id).execute();
}

/** Moves a still-generating agent on; an agent edited or deleted meanwhile is left alone. */
export async function finishGeneration(db: Db, id: string, patch: AgentPatch): Promise<void> {
  await db.updateTable('agents').set(patch).where('id', '=', id).where('status', '=', 'generating').execute();
}

export async function deleteAgent(db: Db, customerId: string, id: string): Promise<void> {
  await db.deleteFrom('agents').where('customer_id', '=', customerId).where('id', '=', id).execute();
}
