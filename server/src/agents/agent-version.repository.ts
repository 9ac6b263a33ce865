import type { Db } from '../store/database.js';
import type { AgentVersionTable } from './agent.table.js';
import type { Page } from '../http/pagination.js';
import { listed, type Listed } from '../store/listing.js';

export type AgentVersionRow = AgentVersionTable;

export async function insertAgentVersion(db: Db, row: AgentVersionRow): Promise<void> {
  await db.insertInto('agent_versions').values(row).execute();
}

export async function findAgentVersion(db: Db, agentId: string, version: number): Promise<AgentVersionRow | undefined> {
  return db.selectFrom('agent_versions').selectAll().where('agent_id', '=', agentId).where('version', '=', version).executeTakeFirst();
}

/** A page of an agent's versions, newest first, and how many it has. */
export async function listAgentVersions(db: Db, agentId: string, page: Page): Promise<Listed<AgentVersionRow>> {
  const count = () => db.selectFrom('agent_versions').select((eb) => eb.fn.countAll<number | string>().as('n')).where('agent_id', '=', agentId).executeTakeFirstOrThrow();
  return listed(page, db.selectFrom('agent_versions').selectAll().where('agent_id', '=', agentId).orderBy('version', 'desc'), async () => (await count()).n);
}
