import { sql } from 'kysely';
import type { Db } from '../../database.js';
import type { Page } from '../../store/page.js';
import { listed, type Listed } from '../../store/listing.js';
import type { AgentTestRunTable, AgentTestTable } from './agent-test.table.js';

export type AgentTestRow = AgentTestTable;
export type AgentTestRunRow = AgentTestRunTable;

export async function insertTest(db: Db, row: AgentTestRow): Promise<void> {
  await db.insertInto('agent_tests').values(row).execute();
}

export async function updateTest(db: Db, row: AgentTestRow): Promise<void> {
  await db
    .updateTable('agent_tests')
    .set({ name: row.name, test: row.test, updated_at: row.updated_at })
    .where('id', '=', row.id)
    .where('customer_id', '=', row.customer_id)
    .execute();
}

export async function deleteTest(db: Db, customerId: string, agentId: string, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('agent_tests')
    .where('id', '=', id)
    .where('customer_id', '=', customerId)
    .where('agent_id', '=', agentId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function findTest(db: Db, customerId: string, agentId: string, id: string) {
  return db
    .selectFrom('agent_tests')
    .selectAll()
    .where('id', '=', id)
    .where('customer_id', '=', customerId)
    .where('agent_id', '=', agentId)
    .executeTakeFirst();
}

/** An agent's tests by name; all of them (a run's), or a page. */
export async function testsOf(db: Db, customerId: string, agentId: string): Promise<AgentTestRow[]> {
  return testsQuery(db, customerId, agentId).selectAll().orderBy('name').orderBy('id').execute();
}

export async function listTests(
  db: Db,
  customerId: string,
  agentId: string,
  page: Page,
): Promise<Listed<AgentTestRow>> {
  const tests = testsQuery(db, customerId, agentId);
  return listed(
    page,
    tests.selectAll().orderBy('name').orderBy('id'),
    tests.select((eb) => eb.fn.countAll<number | string>().as('total')),
  );
}

export async function countTests(db: Db, customerId: string, agentId: string): Promise<number> {
  const row = await testsQuery(db, customerId, agentId)
    .select((eb) => eb.fn.countAll<number | string>().as('total'))
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

const testsQuery = (db: Db, customerId: string, agentId: string) =>
  db.selectFrom('agent_tests').where('customer_id', '=', customerId).where('agent_id', '=', agentId);

export async function insertRun(db: Db, row: AgentTestRunRow): Promise<void> {
  await db.insertInto('agent_test_runs').values(row).execute();
}

export async function finishRun(
  db: Db,
  id: string,
  patch: Pick<AgentTestRunRow, 'status' | 'passed' | 'failed' | 'results' | 'finished_at'>,
): Promise<void> {
  await db.updateTable('agent_test_runs').set(patch).where('id', '=', id).execute();
}

export async function findRun(db: Db, customerId: string, agentId: string, id: string) {
  return db
    .selectFrom('agent_test_runs')
    .selectAll()
    .where('id', '=', id)
    .where('customer_id', '=', customerId)
    .where('agent_id', '=', agentId)
    .executeTakeFirst();
}

/** An agent's newest run. */
export async function latestRun(db: Db, customerId: string, agentId: string) {
  return db
    .selectFrom('agent_test_runs')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('agent_id', '=', agentId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst();
}

/** An agent's runs, newest first. */
export async function listRuns(
  db: Db,
  customerId: string,
  agentId: string,
  page: Page,
): Promise<Listed<AgentTestRunRow>> {
  const runs = db.selectFrom('agent_test_runs').where('customer_id', '=', customerId).where('agent_id', '=', agentId);
  return listed(
    page,
    runs.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'),
    runs.select((eb) => eb.fn.countAll<number | string>().as('total')),
  );
}

/** The deployment a run uses: the one named (the agent's), else the agent's oldest active one (else its oldest, which the run refuses). */
export async function deploymentForRun(db: Db, customerId: string, agentId: string, named: string | undefined) {
  let query = db
    .selectFrom('deployments')
    .select('id')
    .where('customer_id', '=', customerId)
    .where('agent_id', '=', agentId);
  if (named) query = query.where('id', '=', named);
  const row = await query
    .orderBy(sql`case when status = 'active' then 0 else 1 end`)
    .orderBy('created_at')
    .orderBy('id')
    .executeTakeFirst();
  return row?.id;
}

/** What a test conversation came to: its turns in order, the tools called, and whether it went to a person. */
export async function testTranscript(db: Db, conversationId: string) {
  const [turns, tools, conversation] = await Promise.all([
    db
      .selectFrom('turns')
      .select(['id', 'text', 'status', 'reply_text', 'failure_reason', 'reply_actions', 'knowledge', 'created_at'])
      .where('conversation_id', '=', conversationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute(),
    db
      .selectFrom('deliveries')
      .select(['request', 'sent_at'])
      .where('conversation_id', '=', conversationId)
      .where('kind', '=', 'tool')
      .orderBy('sent_at')
      .execute(),
    db
      .selectFrom('conversations')
      .select(['needs_person', 'handoff_reason', 'handler'])
      .where('id', '=', conversationId)
      .executeTakeFirst(),
  ]);
  return { turns, tools, conversation };
}

/** A turn's state, read while a test waits for its answer. */
export async function turnState(db: Db, id: string) {
  return db.selectFrom('turns').select(['status', 'reply_text']).where('id', '=', id).executeTakeFirst();
}

/** The visitor's turns of a conversation of the customer's, to make a test of (README, Tests and analysis). */
export async function visitorTurnsOf(db: Db, customerId: string, conversationId: string) {
  const conversation = await db
    .selectFrom('conversations')
    .select(['agent_id', 'created_at'])
    .where('id', '=', conversationId)
    .where('customer_id', '=', customerId)
    .executeTakeFirst();
  if (!conversation) return undefined;
  const turns = await db
    .selectFrom('turns')
    .select(['text', 'language', 'reply_text'])
    .where('conversation_id', '=', conversationId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return { agentId: conversation.agent_id, createdAt: conversation.created_at, turns };
}
