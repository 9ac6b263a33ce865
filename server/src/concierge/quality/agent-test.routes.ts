import type { AuditTrail } from '../../audit/audit-trail.js';
import { type RouteDef, defineRoute } from '../../http/route.js';
import { deletedSchema, idParams } from '../../shared/schemas.js';
import {
  agentTestSchema,
  createTestBody,
  listQuery,
  runParams,
  runTestsBody,
  testBody,
  testParams,
  testRunSchema,
} from './agent-test.schemas.js';
import type { AgentTestService } from './agent-test.service.js';

const TAG = 'Agent tests';

/** An agent's tests and their runs (README, Tests and analysis). */
export function agentTestRoutes(tests: AgentTestService, trail: AuditTrail): RouteDef[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/v1/agents/:id/tests',
      operationId: 'listAgentTests',
      summary: "List an agent's tests, by name",
      tag: TAG,
      params: idParams,
      query: listQuery,
      errors: ['not_found'],
      success: { status: 200, description: 'A page of tests', data: agentTestSchema.array(), list: true },
      handler: async ({ principal, params, query }) => tests.list(principal.customerId, params.id, query),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/agents/:id/tests',
      operationId: 'createAgentTest',
      summary: 'Write a test, or make one of a conversation (`from_conversation_id`)',
      tag: TAG,
      params: idParams,
      body: createTestBody,
      errors: ['not_found', 'invalid_state'],
      success: { status: 201, description: 'The test', data: agentTestSchema },
      handler: async (ctx) => {
        const { principal, params, body } = ctx;
        const data =
          'from_conversation_id' in body
            ? await tests.fromConversation(
                principal.customerId,
                params.id,
                body.from_conversation_id,
                body.name,
                trail.by(ctx),
              )
            : await tests.create(principal.customerId, params.id, body, trail.by(ctx));
        return { data };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/agents/:id/tests/:test_id',
      operationId: 'getAgentTest',
      summary: 'Get a test',
      tag: TAG,
      params: testParams,
      errors: ['not_found'],
      success: { status: 200, description: 'The test', data: agentTestSchema },
      handler: async ({ principal, params }) => ({
        data: await tests.get(principal.customerId, params.id, params.test_id),
      }),
    }),
    defineRoute({
      method: 'put',
      path: '/api/v1/agents/:id/tests/:test_id',
      operationId: 'updateAgentTest',
      summary: 'Replace a test',
      tag: TAG,
      params: testParams,
      body: testBody,
      errors: ['not_found'],
      success: { status: 200, description: 'The test', data: agentTestSchema },
      handler: async (ctx) => ({
        data: await tests.update(ctx.principal.customerId, ctx.params.id, ctx.params.test_id, ctx.body, trail.by(ctx)),
      }),
    }),
    defineRoute({
      method: 'delete',
      path: '/api/v1/agents/:id/tests/:test_id',
      operationId: 'deleteAgentTest',
      summary: 'Delete a test (its past runs keep its result)',
      tag: TAG,
      params: testParams,
      errors: ['not_found'],
      success: { status: 200, description: 'Deleted', data: deletedSchema },
      handler: async (ctx) => ({
        data: await tests.remove(ctx.principal.customerId, ctx.params.id, ctx.params.test_id, trail.by(ctx)),
      }),
    }),
    defineRoute({
      method: 'post',
      path: '/api/v1/agents/:id/tests/run',
      operationId: 'runAgentTests',
      summary: "Run the tests against the draft or a version, through the agent's real responder, and keep the run",
      tag: TAG,
      params: idParams,
      body: runTestsBody,
      errors: ['not_found', 'invalid_state'],
      success: { status: 200, description: 'The run, each test with its transcript and verdicts', data: testRunSchema },
      handler: async ({ principal, params, body }) => ({
        data: await tests.run(principal.customerId, params.id, body),
      }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/agents/:id/test-runs',
      operationId: 'listAgentTestRuns',
      summary: "List an agent's test runs, newest first",
      tag: TAG,
      params: idParams,
      query: listQuery,
      errors: ['not_found'],
      success: { status: 200, description: 'A page of runs', data: testRunSchema.array(), list: true },
      handler: async ({ principal, params, query }) => tests.runs(principal.customerId, params.id, query),
    }),
    defineRoute({
      method: 'get',
      path: '/api/v1/agents/:id/test-runs/:run_id',
      operationId: 'getAgentTestRun',
      summary: 'Get a test run',
      tag: TAG,
      params: runParams,
      errors: ['not_found'],
      success: { status: 200, description: 'The run', data: testRunSchema },
      handler: async ({ principal, params }) => ({
        data: await tests.getRun(principal.customerId, params.id, params.run_id),
      }),
    }),
  ];
}
