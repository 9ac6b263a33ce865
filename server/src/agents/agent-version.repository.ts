import type { Db } from '../database.js';
import type { AgentVersionTable } from './agent.table.js';
import type { Page } from '../store/page.js';
import { listed, type Listed } from '../store/listing.js';

export type AgentVersionRow = AgentVersionTable;

export async function insertAgentVersion(db: Db, row: AgentVersionRow): Promise<void> {
  await db.insertInto('agent_versions').values(row).execute();
}

export async function findAgentVersion(db: Db, agentId: string, version: number): Promise<AgentVersionRow | undefined> {
  return db
    .selectFrom('agent_versions')
    .selectAll()
    .where('agent_id', '=', agentId)
    .where('version', '=', version)
    .executeTakeFirst();
}

/** A page of an agent's versions, newest first, and how many it has. */
export async function listAgentVersions(db: Db, agentId: string, page: Page): Promise<Listed<AgentVersionRow>> {
  const versions = db.selectFrom('agent_versions').where('agent_id', '=', agentId);
  return listed(
    page,
    versions.selectAll().orderBy('version', 'desc'),
    versions.select((eb) => eb.fn.countAll<number | string>().as('total')),
  );
}
