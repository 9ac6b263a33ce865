import { type Audit, auditEntry, recorded, type Writes } from '../../audit/audit-trail.js';
import type { Db } from '../../database.js';
import { AppError, invalidState, notFound } from '../../errors.js';
import { type Page, pageOf } from '../../http/pagination.js';
import { requireAgent } from '../../agents/agent.service.js';
import { findAgentVersion } from '../../agents/agent-version.repository.js';
import { type DeploymentDirectory, withSpec } from '../../deployments/deployment-context.js';
import { fromJsonColumn } from '../../shared/json-column.js';
import { newId } from '../../shared/random.js';
import { isoNow } from '../../shared/time.js';
import { type AgentTest, MAX_TESTS, type TestBody, type TestResult, type TestRun } from './agent-test.schemas.js';
import {
  type AgentTestRow,
  type AgentTestRunRow,
  countTests,
  deleteTest,
  deploymentForRun,
  findRun,
  findTest,
  finishRun,
  insertRun,
  insertTest,
  latestRun,
  listRuns,
  listTests,
  testsOf,
  updateTest,
  visitorTurnsOf,
} from './agent-test.repository.js';
import type { TestRunner, TestToRun } from './test-runner.js';
import type { EvaluationModels } from '../models/evaluation-model.js';

/** Tests of one run going at once: a run of many is quick without flooding the agent's responder. */
const AT_ONCE = 4;

const toTest = (row: AgentTestRow): AgentTest => ({
  id: row.id,
  agent_id: row.agent_id,
  ...(JSON.parse(row.test) as TestBody),
  created_at: row.created_at,
  updated_at: row.updated_at,
});

const toRun = (row: AgentTestRunRow): TestRun => ({
  id: row.id,
  agent_id: row.agent_id,
  deployment_id: row.deployment_id,
  version: row.version,
  status: row.status,
  passed: row.passed,
  failed: row.failed,
  results: row.results ? (JSON.parse(row.results) as TestResult[]) : [],
  created_at: row.created_at,
  finished_at: row.finished_at,
});

/**
 * An agent's tests and their runs (README, Tests and analysis): written, run against the draft or a
 * version through the real turn pipeline, made from a conversation, and required to pass before a
 * publish when the spec says so.
 */
export class AgentTestService {
  constructor(
    private readonly parts: {
      db: Db;
      writes: Writes;
      deployments: DeploymentDirectory;
      runner: TestRunner;
      /** The model that judges and plays visitors: asked for once a run. */
      models: Pick<EvaluationModels, 'of'>;
    },
  ) {}

  async list(customerId: string, agentId: string, page: Page) {
    await requireAgent(this.parts.db, customerId, agentId);
    return pageOf(page, await listTests(this.parts.db, customerId, agentId, page), toTest);
  }

  async get(customerId: string, agentId: string, id: string): Promise<AgentTest> {
    return toTest(await this.#require(customerId, agentId, id));
  }

  async create(customerId: string, agentId: string, input: TestBody, audit: Audit): Promise<AgentTest> {
    const { db, writes } = this.parts;
    await requireAgent(db, customerId, agentId);
    if ((await countTests(db, customerId, agentId)) >= MAX_TESTS)
      throw invalidState(`An agent has at most ${MAX_TESTS} tests: delete one first`);
    const now = isoNow();
    const row: AgentTestRow = {
      id: newId(),
      customer_id: customerId,
      agent_id: agentId,
      name: input.name,
      test: JSON.stringify(input),
      created_at: now,
      updated_at: now,
    };
    await recorded(writes, audit, auditEntry('agent_test.created', row.id), (trx) => insertTest(trx, row));
    return toTest(row);
  }

  /**
   * A test of the visitor's turns of a conversation (README, Tests and analysis), with no
   * expectations yet: what the agent should say is the customer's to write.
   */
  async fromConversation(
    customerId: string,
    agentId: string,
    conversationId: string,
    name: string | undefined,
    audit: Audit,
  ): Promise<AgentTest> {
    const found = await visitorTurnsOf(this.parts.db, customerId, conversationId);
    if (!found || found.agentId !== agentId) throw notFound('Conversation');
    if (!found.turns.length) throw invalidState('The conversation has no turns to make a test of');
    const turns = found.turns.slice(0, 20).map((t) => ({ visitor: t.text }));
    const language = found.turns.find((t) => t.language)?.language ?? undefined;
    return this.create(
      customerId,
      agentId,
      {
        name: name ?? `Conversation of ${found.createdAt.slice(0, 16).replace('T', ' ')}`,
        turns,
        expect: [],
        ...(language ? { language } : {}),
      },
      audit,
    );
  }

  async update(customerId: string, agentId: string, id: string, input: TestBody, audit: Audit): Promise<AgentTest> {
    const row = {
      ...(await this.#require(customerId, agentId, id)),
      name: input.name,
      test: JSON.stringify(input),
      updated_at: isoNow(),
    };
    await recorded(this.parts.writes, audit, auditEntry('agent_test.updated', id), (trx) => updateTest(trx, row));
    return toTest(row);
  }

  async remove(customerId: string, agentId: string, id: string, audit: Audit) {
    const deleted = await recorded(this.parts.writes, audit, auditEntry('agent_test.deleted', id), (trx) =>
      deleteTest(trx, customerId, agentId, id),
    );
    if (!deleted) throw notFound('Test');
    return { id, deleted: true as const };
  }

  async runs(customerId: string, agentId: string, page: Page) {
    await requireAgent(this.parts.db, customerId, agentId);
    return pageOf(page, await listRuns(this.parts.db, customerId, agentId, page), toRun);
  }

  async getRun(customerId: string, agentId: string, id: string): Promise<TestRun> {
    const row = await findRun(this.parts.db, customerId, agentId, id);
    if (!row) throw notFound('Test run');
    return toRun(row);
  }

  /**
   * Runs the agent's tests (or those named) against its draft or a published version, on one of its
   * deployments (its hook, limits and voice), and keeps the run.
   */
  async run(
    customerId: string,
    agentId: string,
    options: { version?: number | undefined; deployment_id?: string | undefined; test_ids?: string[] | undefined },
  ): Promise<TestRun> {
    const { db, deployments, runner, models } = this.parts;
    const agent = await requireAgent(db, customerId, agentId);
    let spec = agent.draft_spec ?? agent.agent_spec ?? '{}';
    if (options.version !== undefined) {
      const version = await findAgentVersion(db, agentId, options.version);
      if (!version)
        throw new AppError('invalid_request', `The agent has no published version ${options.version}`, [
          { path: 'version', message: 'no such published version' },
        ]);
      spec = version.agent_spec ?? '{}';
    }
    const depId = await deploymentForRun(db, customerId, agentId, options.deployment_id);
    const dep = depId ? await deployments.fresh(depId) : undefined;
    if (!dep)
      throw options.deployment_id
        ? notFound('Deployment')
        : invalidState('Tests run on a deployment of the agent (its hook, limits and voice): create one first');
    if (dep.status !== 'active') throw invalidState('Tests run on an active deployment: activate it first');
    let tests = (await testsOf(db, customerId, agentId)).map((row): TestToRun => ({
      id: row.id,
      name: row.name,
      test: JSON.parse(row.test) as TestBody,
    }));
    if (options.test_ids) {
      const wanted = new Set(options.test_ids);
      tests = tests.filter((t) => wanted.has(t.id));
      if (tests.length !== wanted.size) throw notFound('Test');
    }
    const row: AgentTestRunRow = {
      id: newId(),
      customer_id: customerId,
      agent_id: agentId,
      deployment_id: dep.id,
      version: options.version ?? null,
      spec,
      status: 'running',
      passed: 0,
      failed: 0,
      results: null,
      created_at: isoNow(),
      finished_at: null,
    };
    await insertRun(db, row);
    const runDep = withSpec(dep, spec, options.version ?? dep.spec.version);
    const run = { id: row.id, dep: runDep, version: row.version, model: await models.of(customerId, runDep.spec) };
    const results: TestResult[] = new Array(tests.length);
    let next = 0;
    const worker = async () => {
      while (next < tests.length) {
        const at = next++;
        results[at] = await runner.run(run, tests[at]!).catch((err: Error): TestResult => ({
          test_id: tests[at]!.id,
          name: tests[at]!.name,
          passed: false,
          conversation_id: null,
          transcript: [],
          tool_calls: [],
          handed_off: false,
          verdicts: [],
          error: `the test could not run: ${err.message}`,
          duration_ms: 0,
        }));
      }
    };
    await Promise.all(Array.from({ length: Math.min(AT_ONCE, tests.length) }, worker));
    const passed = results.filter((r) => r.passed).length;
    const finished = {
      status: passed === results.length ? ('passed' as const) : ('failed' as const),
      passed,
      failed: results.length - passed,
      results: JSON.stringify(results),
      finished_at: isoNow(),
    };
    await finishRun(db, row.id, finished);
    return toRun({ ...row, ...finished });
  }

  /**
   * The publish gate (README, Tests and analysis): a draft whose spec sets `require_tests` is
   * published only when every test passes against it; else `409 tests_failed`, naming the failing.
   */
  async gate(customerId: string, agentId: string, draft: string | null): Promise<void> {
    const spec = fromJsonColumn<Record<string, unknown>>(draft) ?? {};
    if (spec.require_tests !== true) return;
    if (await this.#passedAlready(customerId, agentId, draft)) return;
    const run = await this.run(customerId, agentId, {});
    const failing = run.results.filter((r) => !r.passed);
    if (!failing.length) return;
    throw new AppError(
      'tests_failed',
      `${failing.length} of ${run.results.length} tests failed against the draft (run ${run.id}); nothing was published`,
      failing.map((r) => ({ path: `tests.${r.test_id}`, message: `${r.name}: ${failureOf(r)}` })),
    );
  }

  /**
   * The newest run passed against this very draft, of every test as it is now (none added, edited
   * or deleted since): publishing right after it (the console's Publish runs the tests first) need
   * not run them again.
   */
  async #passedAlready(customerId: string, agentId: string, draft: string | null): Promise<boolean> {
    const { db } = this.parts;
    const run = await latestRun(db, customerId, agentId);
    if (!run || run.status !== 'passed' || run.version !== null || run.spec !== (draft ?? '{}')) return false;
    const ran = new Set((JSON.parse(run.results ?? '[]') as TestResult[]).map((r) => r.test_id));
    const tests = await testsOf(db, customerId, agentId);
    return tests.length === ran.size && tests.every((t) => ran.has(t.id) && t.updated_at < run.created_at);
  }

  async #require(customerId: string, agentId: string, id: string): Promise<AgentTestRow> {
    const row = await findTest(this.parts.db, customerId, agentId, id);
    if (!row) throw notFound('Test');
    return row;
  }
}

/** Why a test failed, in words: its error, or its first failed expectation. */
function failureOf(result: TestResult): string {
  if (result.error) return result.error;
  const failed = result.verdicts.find((v) => v.passed === false);
  return failed ? `${failed.expectation.type}: ${failed.reason}` : 'failed';
}
