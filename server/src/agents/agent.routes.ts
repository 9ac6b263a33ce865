import { JsonText } from '../http/envelope.js';
import { type RouteDef, defineRoute } from '../http/route.js';
import { jobAcceptedSchema, jobSchema } from './generation/job.schemas.js';
import { getLatestJobForAgent } from './generation/job.service.js';
import { deletedSchema, idParams } from '../shared/schemas.js';
import type { Db } from '../database.js';
import type { AuditTrail, Writes } from '../audit/audit-trail.js';
import { pageQuery } from '../http/pagination.js';
import {
  type Agent,
  agentSchema,
  agentSpecSchema,
  agentVersionParams,
  agentVersionSchema,
  createAgentBody,
  listAgentsQuery,
  updateAgentBody,
} from './agent.schemas.js';
import {
  agentSeenBy,
  createAgent,
  getAgentSpec,
  getAgentVersion,
  listAgentsPage,
  listVersionsPage,
  publishAgent,
  removeAgent,
  requireAgent,
  toAgent,
  updateAgentFields,
} from './agent.service.js';

export interface AgentRouteDeps {
  db: Db;
  /** Where changes are written with their audit records. */
  writes: Writes;
  /** Who makes each change, for its audit record. */
  trail: AuditTrail;
  /** Wakes the generation worker so a new job starts without waiting for the next poll. */
  onJobQueued(): void;
  /**
   * After a publish, or a change of what the deployments read of the agent beside its spec (its
   * knowledge base): they use it from their next turn or conversation.
   */
  onChanged(agentId: string): Promise<void>;
  /** Refuses a publish the agent's tests do not allow (README, Tests and analysis), given the draft about to be published. */
  beforePublish(customerId: string, agentId: string, draft: string | null): Promise<void>;
}

export function agentRoutes({ db, writes, trail, onJobQueued, onChanged, beforePublish }: AgentRouteDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/agents',
      operationId: 'listAgents',
      summary: 'List agents, newest first',
      tag: 'Agents',
      query: listAgentsQuery,
      success: { status: 200, description: 'A page of agents', data: agentSchema.array(), list: true },
      handler: async ({ principal, query: { page, per_page, status, search } }) => {
        const { itemsJson, meta } = await listAgentsPage(
          db,
          principal.customerId,
          { status, search },
          { page, per_page },
        );
        // Read as stored for every role but the one that sees less.
        if (principal.role === 'agent')
          return { data: (JSON.parse(itemsJson) as Agent[]).map(agentSeenBy(principal.role)), meta };
        return { data: new JsonText(itemsJson), meta };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/agents',
      operationId: 'createAgent',
      summary: 'Create an agent and start its generation job',
      tag: 'Agents',
      body: createAgentBody,
      success: {
        status: 202,
        description: 'Generation queued; poll the Location',
        data: jobAcceptedSchema,
        headers: { Location: 'The polling address, /api/v1/jobs/{job_id}/status' },
      },
      handler: async (ctx) => {
        const accepted = await createAgent(db, ctx.principal.customerId, ctx.body, trail.by(ctx));
        onJobQueued();
        return { data: accepted, headers: { Location: accepted.polling_url } };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/agents/:id',
      operationId: 'getAgent',
      summary: 'Get an agent',
      tag: 'Agents',
      params: idParams,
      errors: ['not_found'],
      success: { status: 200, description: 'The agent', data: agentSchema },
      handler: async ({ principal, params }) => ({
        data: agentSeenBy(principal.role)(toAgent(await requireAgent(db, principal.customerId, params.id))),
      }),
    }),
    defineRoute({
      method: 'put',
      path: '/api/v1/agents/:id',
      operationId: 'updateAgent',
      summary: 'Update an agent (refused while generating)',
      tag: 'Agents',
      params: idParams,
      body: updateAgentBody,
      errors: ['not_found', 'invalid_state'],
      success: { status: 200, description: 'The updated agent', data: agentSchema },
      handler: async (ctx) => {
        const { principal, params, body } = ctx;
        const data = await updateAgentFields(db, principal.customerId, params.id, body, writes, trail.by(ctx));
        if (body.knowledge_base_id !== undefined) await onChanged(data.id);
        return { data };
      },
    }),
    defineRoute({
      method: 'delete',
      path: '/api/v1/agents/:id',
      operationId: 'deleteAgent',
      summary: 'Delete an agent and its deployments (refused while one is active)',
      tag: 'Agents',
      params: idParams,
      errors: ['not_found', 'invalid_state'],
      success: { status: 200, description: 'Deleted', data: deletedSchema },
      handler: async (ctx) => ({
        data: await removeAgent(db, ctx.principal.customerId, ctx.params.id, trail.by(ctx)),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/agents/:id/spec',
      operationId: 'getAgentSpec',
      summary: "Get an agent's published, draft and generated specs",
      tag: 'Agents',
      params: idParams,
      errors: ['not_found'],
      success: { status: 200, description: 'The specs', data: agentSpecSchema },
      handler: async ({ principal, params }) => ({ data: await getAgentSpec(db, principal.customerId, params.id) }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/agents/:id/versions',
      operationId: 'listAgentVersions',
      summary: "List an agent's published versions, newest first (each publish that changes agent_spec makes one)",
      tag: 'Agents',
      params: idParams,
      query: pageQuery,
      errors: ['not_found'],
      success: { status: 200, description: 'A page of versions', data: agentVersionSchema.array(), list: true },
      handler: async ({ principal, params, query }) => listVersionsPage(db, principal.customerId, params.id, query),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/agents/:id/versions/:version',
      operationId: 'getAgentVersion',
      summary: 'Get one published version of an agent, as it was published',
      tag: 'Agents',
      params: agentVersionParams,
      errors: ['not_found'],
      success: { status: 200, description: 'The version', data: agentVersionSchema },
      handler: async ({ principal, params }) => ({
        data: await getAgentVersion(db, principal.customerId, params.id, params.version),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/agents/:id/generation-status',
      operationId: 'getAgentGenerationStatus',
      summary: "The agent's latest generation job",
      tag: 'Agents',
      params: idParams,
      errors: ['not_found'],
      success: { status: 200, description: 'The job', data: jobSchema },
      handler: async ({ principal, params }) => {
        await requireAgent(db, principal.customerId, params.id);
        return { data: await getLatestJobForAgent(db, principal.customerId, params.id) };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/agents/:id/publish',
      operationId: 'publishAgent',
      summary: 'Publish the draft spec as a new version',
      tag: 'Agents',
      params: idParams,
      errors: ['not_found', 'invalid_state', 'tests_failed'],
      success: { status: 200, description: 'The published agent', data: agentSchema },
      handler: async (ctx) => {
        const agent = await publishAgent(db, ctx.principal.customerId, ctx.params.id, trail.by(ctx), beforePublish);
        await onChanged(agent.id);
        return { data: agent };
      },
    }),
  ];
}
