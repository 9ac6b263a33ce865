import type { Kysely, Migration } from 'kysely';

/**
 * Knowing an agent works (README, Tests and analysis): its tests and their runs, the test run a
 * conversation belongs to (and the tool answers it mocks), each conversation's analysis as a job
 * claimed with a lease (like agent generation's), the analysis's values one row each so the history
 * filters and analytics count them on both stores, and a deployment's split between agent versions.
 */
export const quality: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('agent_tests')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('test', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('agent_tests_agent').on('agent_tests').columns(['agent_id', 'name']).execute();
    await db.schema
      .createTable('agent_test_runs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('deployment_id', 'text', (c) => c.notNull())
      .addColumn('version', 'integer')
      .addColumn('spec', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('passed', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('failed', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('results', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('finished_at', 'text')
      .execute();
    await db.schema
      .createIndex('agent_test_runs_agent')
      .on('agent_test_runs')
      .columns(['agent_id', 'created_at'])
      .execute();
    for (const column of ['test_run_id', 'test_mocks'])
      await db.schema.alterTable('conversations').addColumn(column, 'text').execute();
    await db.schema.alterTable('deployments').addColumn('agent_versions', 'text').execute();
    await db.schema
      .createTable('conversation_analyses')
      .addColumn('conversation_id', 'text', (c) => c.primaryKey().references('conversations.id').onDelete('cascade'))
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('agent_version', 'integer')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('lease_expires_at', 'text')
      .addColumn('due_at', 'text', (c) => c.notNull())
      .addColumn('analysis', 'text')
      .addColumn('error', 'text')
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('conversation_analyses_due')
      .on('conversation_analyses')
      .columns(['status', 'due_at'])
      .execute();
    await db.schema
      .createTable('conversation_analysis_values')
      .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('agent_version', 'integer')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('value', 'text', (c) => c.notNull())
      .addColumn('analyzed_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('conversation_analysis_values_pk', ['conversation_id', 'kind', 'name'])
      .execute();
    await db.schema
      .createIndex('conversation_analysis_values_agent')
      .on('conversation_analysis_values')
      .columns(['customer_id', 'agent_id', 'kind', 'name', 'value'])
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('conversation_analysis_values').execute();
    await db.schema.dropTable('conversation_analyses').execute();
    await db.schema.alterTable('deployments').dropColumn('agent_versions').execute();
    for (const column of ['test_mocks', 'test_run_id'])
      await db.schema.alterTable('conversations').dropColumn(column).execute();
    await db.schema.dropTable('agent_test_runs').execute();
    await db.schema.dropTable('agent_tests').execute();
  },
};
