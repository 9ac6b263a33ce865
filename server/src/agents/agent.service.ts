import type { Role } from '#protocol/roles';
import { AppError, invalidState, notFound } from '../errors.js';
import { type Page, pageMeta, pageOf } from '../http/pagination.js';
import { deleteJobsOfAgent, insertJob } from './generation/job.repository.js';
import { pollingUrlOf } from './generation/job.service.js';
import { fromJsonColumn, toJsonColumn } from '../shared/json-column.js';
import { newId } from '../shared/random.js';
import { isoNow } from '../shared/time.js';
import type { Db } from '../database.js';
import { type Audit, auditEntry, recorded, type Writes } from '../audit/audit-trail.js';
import { shapeRow } from '../store/json-shape.js';
import {
  countActiveDeploymentsOfAgent,
  type AgentFilter,
  type AgentPatch,
  AGENT_SHAPE,
  type AgentRow,
  deleteAgent,
  findAgent,
  insertAgent,
  listAgentsJson,
  transitionAgent,
  updateAgent,
} from './agent.repository.js';
import {
  findAgentVersion,
  insertAgentVersion,
  listAgentVersions,
  type AgentVersionRow,
} from './agent-version.repository.js';
import type { Agent, AgentVersion, CreateAgentInput, UpdateAgentInput } from './agent.schemas.js';
import { responderOf } from './agent-responder.js';
import { checkPublishable } from './agent-spec.js';
import { findModelEndpoint } from '../model-endpoints/model-endpoint.repository.js';
import { findBase } from '../knowledge/knowledge.repository.js';

export const toAgent = (row: AgentRow): Agent => shapeRow(AGENT_SHAPE, row);

/**
 * An agent as `role` may read it (README, Your team): the agent role, which answers visitors, reads
 * an agent's name and state, never its specs (its instructions, and the URLs of its tools, which
 * may carry the customer's tokens).
 */
export function agentSeenBy(role: Role): (agent: Agent) => Agent {
  if (role !== 'agent') return (agent) => agent;
  return (agent) => ({ ...agent, agent_spec: null, draft_spec: null, generated_spec: null });
}

const searchTextOf = (name: string, description: string | null): string =>
  `${name}\n${description ?? ''}`.toLowerCase();

export async function requireAgent(db: Db, customerId: string, id: string): Promise<AgentRow> {
  const row = await findAgent(db, customerId, id);
  if (!row) throw notFound('Agent');
  return row;
}

export async function listAgentsPage(db: Db, customerId: string, filter: AgentFilter, page: Page) {
  const { items, total } = await listAgentsJson(db, customerId, filter, page);
  return { itemsJson: items, meta: pageMeta(page, total) };
}

/** Creates the agent in `generating` with its durable generation job, in one transaction. */
export async function createAgent(db: Db, customerId: string, input: CreateAgentInput, audit: Audit) {
  const now = isoNow();
  const agentId = newId();
  const jobId = newId();
  const description = input.description ?? null;
  await db.transaction().execute(async (trx) => {
    await insertAgent(trx, {
      id: agentId,
      customer_id: customerId,
      name: input.name,
      description,
      status: 'generating',
      version: 0,
      agent_spec: null,
      draft_spec: null,
      generated_spec: null,
      test_mode_enabled: 0,
      project_id: null,
      knowledge_base_id: null,
      search_text: searchTextOf(input.name, description),
      created_at: now,
      updated_at: now,
    });
    await insertJob(trx, {
      id: jobId,
      customer_id: customerId,
      agent_id: agentId,
      kind: 'generate_agent',
      status: 'queued',
      progress: 0,
      error: null,
      attempts: 0,
      lease_expires_at: null,
      created_at: now,
      updated_at: now,
    });
    await audit(trx, auditEntry('agent.created', agentId, { changes: Object.keys(input) }));
  });
  return { job_id: jobId, agent_id: agentId, status: 'queued' as const, polling_url: pollingUrlOf(jobId) };
}

export async function updateAgentFields(
  db: Db,
  customerId: string,
  id: string,
  input: UpdateAgentInput,
  writes: Writes,
  audit: Audit,
): Promise<Agent> {
  const row = await requireAgent(db, customerId, id);
  if (row.status === 'generating')
    throw invalidState('The agent is still generating; update it once generation has finished');
  // The base its turns are answered from (README, Answers from your documents): one of the customer's own.
  if (input.knowledge_base_id && !(await findBase(db, customerId, input.knowledge_base_id)))
    throw new AppError('invalid_request', 'Invalid body', [
      { path: 'knowledge_base_id', message: 'is not one of your knowledge bases (GET /api/v1/knowledge-bases)' },
    ]);
  const patch: AgentPatch = { updated_at: isoNow() };
  if (input.name !== undefined) patch.name = input.name;
  if (input.description !== undefined) patch.description = input.description;
  if (input.name !== undefined || input.description !== undefined) {
    patch.search_text = searchTextOf(patch.name ?? row.name, patch.description ?? row.description);
  }
  if (input.draft_spec !== undefined) patch.draft_spec = toJsonColumn(input.draft_spec);
  if (input.test_mode_enabled !== undefined) patch.test_mode_enabled = input.test_mode_enabled ? 1 : 0;
  if (input.project_id !== undefined) patch.project_id = input.project_id;
  if (input.knowledge_base_id !== undefined) patch.knowledge_base_id = input.knowledge_base_id;
  await recorded(writes, audit, auditEntry('agent.updated', id, { changes: Object.keys(input) }), (trx) =>
    updateAgent(trx, customerId, id, patch),
  );
  return toAgent({ ...row, ...patch });
}

/** A model responder's `endpoint_id` must be one of the customer's model endpoints. */
async function checkResponderEndpoint(db: Db, customerId: string, draft: Record<string, unknown>): Promise<void> {
  const responder = responderOf(draft);
  if (responder.type !== 'model' || !responder.endpoint_id) return;
  if (await findModelEndpoint(db, customerId, responder.endpoint_id)) return;
  throw new AppError('invalid_request', "The draft's responder cannot be used; nothing was published", [
    {
      path: 'draft_spec.responder.endpoint_id',
      message: 'is not one of your model endpoints (GET /api/v1/model-endpoints)',
    },
  ]);
}

/** `agent_spec := draft_spec`; the version moves only when the published spec changes. */
export async function publishAgent(
  db: Db,
  customerId: string,
  id: string,
  audit: Audit,
  gate?: (customerId: string, agentId: string, draft: string | null) => Promise<void>,
): Promise<Agent> {
  const row = await requireAgent(db, customerId, id);
  if (row.status !== 'draft' && row.status !== 'published') {
    throw invalidState(`An agent in status '${row.status}' cannot be published; only draft or published agents can`);
  }
  const draft = fromJsonColumn<Record<string, unknown>>(row.draft_spec) ?? {};
  checkPublishable(draft);
  await checkResponderEndpoint(db, customerId, draft);
  await gate?.(customerId, id, row.draft_spec);
  const changed = row.agent_spec !== row.draft_spec || row.version === 0;
  const patch: AgentPatch = {
    agent_spec: row.draft_spec,
    version: changed ? row.version + 1 : row.version,
    updated_at: changed || row.status !== 'published' ? isoNow() : row.updated_at,
  };
  const moved = await db.transaction().execute(async (trx) => {
    if (!(await transitionAgent(trx, id, row.status, 'published', patch))) return false;
    // Each published spec is kept as it was: deployments may pin it, conversations keep it.
    if (changed && row.draft_spec !== null)
      await insertAgentVersion(trx, {
        agent_id: id,
        version: patch.version!,
        agent_spec: row.draft_spec,
        published_at: patch.updated_at!,
      });
    await audit(trx, auditEntry('agent.published', id, { changes: changed ? ['agent_spec', 'version'] : [] }));
    return true;
  });
  // Someone else changed the agent between our read and write: report it rather than guess.
  if (!moved) throw invalidState('The agent changed while publishing; retry');
  return toAgent({ ...row, ...patch, status: 'published' });
}

export async function getAgentSpec(db: Db, customerId: string, id: string) {
  const agent = toAgent(await requireAgent(db, customerId, id));
  return {
    agent_id: agent.id,
    version: agent.version,
    agent_spec: agent.agent_spec,
    draft_spec: agent.draft_spec,
    generated_spec: agent.generated_spec,
  };
}

/** Refused while a deployment of the agent is live; otherwise takes its deployments and jobs with it. */
export async function removeAgent(db: Db, customerId: string, id: string, audit: Audit) {
  await requireAgent(db, customerId, id);
  return db.transaction().execute(async (trx) => {
    if ((await countActiveDeploymentsOfAgent(trx, id)) > 0) {
      throw invalidState('The agent has an active deployment; deactivate it before deleting the agent');
    }
    await deleteJobsOfAgent(trx, id);
    await deleteAgent(trx, customerId, id);
    await audit(trx, auditEntry('agent.deleted', id));
    return { id, deleted: true as const };
  });
}

const toAgentVersion = (row: AgentVersionRow): AgentVersion => ({
  version: row.version,
  agent_spec: fromJsonColumn(row.agent_spec),
  published_at: row.published_at,
});

/** The agent's published versions, newest first. */
export async function listVersionsPage(db: Db, customerId: string, id: string, page: Page) {
  await requireAgent(db, customerId, id);
  return pageOf(page, await listAgentVersions(db, id, page), toAgentVersion);
}

export async function getAgentVersion(db: Db, customerId: string, id: string, version: number): Promise<AgentVersion> {
  await requireAgent(db, customerId, id);
  const row = await findAgentVersion(db, id, version);
  if (!row) throw notFound('Agent version');
  return toAgentVersion(row);
}
