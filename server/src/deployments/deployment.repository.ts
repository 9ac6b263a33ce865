import type { Db } from '../database.js';
import type { DeploymentStatus, DeploymentTable, Environment } from './deployment.table.js';
import type { Page } from '../store/page.js';
import { listed, type Listed } from '../store/listing.js';

export type DeploymentRow = DeploymentTable;
export type DeploymentView = DeploymentRow & { agent_name: string };
export type DeploymentPatch = Partial<Omit<DeploymentRow, 'id' | 'customer_id' | 'agent_id' | 'created_at'>>;

export interface DeploymentFilter {
  agent_id?: string | undefined;
  status?: DeploymentStatus | undefined;
  environment?: Environment | undefined;
}

export async function insertDeployment(db: Db, row: DeploymentRow): Promise<void> {
  await db.insertInto('deployments').values(row).execute();
}

function withAgentName(db: Db, customerId: string) {
  return db
    .selectFrom('deployments')
    .innerJoin('agents', 'agents.id', 'deployments.agent_id')
    .where('deployments.customer_id', '=', customerId);
}

export async function findDeployment(db: Db, customerId: string, id: string): Promise<DeploymentView | undefined> {
  return withAgentName(db, customerId)
    .selectAll('deployments')
    .select('agents.name as agent_name')
    .where('deployments.id', '=', id)
    .executeTakeFirst();
}

function filtered(db: Db, customerId: string, filter: DeploymentFilter) {
  let query = withAgentName(db, customerId);
  if (filter.agent_id) query = query.where('deployments.agent_id', '=', filter.agent_id);
  if (filter.status) query = query.where('deployments.status', '=', filter.status);
  if (filter.environment) query = query.where('deployments.environment', '=', filter.environment);
  return query;
}

export async function listDeployments(
  db: Db,
  customerId: string,
  filter: DeploymentFilter,
  page: Page,
): Promise<Listed<DeploymentView>> {
  const matching = filtered(db, customerId, filter);
  const rows = matching
    .selectAll('deployments')
    .select('agents.name as agent_name')
    .orderBy('deployments.created_at', 'desc')
    .orderBy('deployments.id', 'desc');
  return listed(
    page,
    rows,
    matching.select((eb) => eb.fn.countAll<number | string>().as('total')),
  );
}

export async function updateDeployment(db: Db, customerId: string, id: string, patch: DeploymentPatch): Promise<void> {
  await db.updateTable('deployments').set(patch).where('customer_id', '=', customerId).where('id', '=', id).execute();
}

export async function deleteDeployment(db: Db, customerId: string, id: string): Promise<void> {
  await db.deleteFrom('deployments').where('customer_id', '=', customerId).where('id', '=', id).execute();
}

export async function deploymentIdsOfAgent(db: Db, agentId: string): Promise<string[]> {
  const rows = await db.selectFrom('deployments').select('id').where('agent_id', '=', agentId).execute();
  return rows.map((r) => r.id);
}

/** Stops transcript delivery to the deployment's target (see `transcript_hook_status`); false when it was stopped already. */
export async function disableTranscriptTarget(
  db: Db,
  deploymentId: string,
  at: string,
  reason: string,
): Promise<boolean> {
  const result = await db
    .updateTable('deployments')
    .set({
      transcript_hook_status: 'disabled',
      transcript_hook_disabled_at: at,
      transcript_hook_disabled_reason: reason,
      updated_at: at,
    })
    .where('id', '=', deploymentId)
    .where('transcript_hook_status', '=', 'active')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}
