import type { Kysely, Migration } from 'kysely';

// Columns are text/integer only so the same migration means the same thing on SQLite and PostgreSQL.
export const management: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('customers')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('prefix', 'text', (c) => c.notNull())
      .addColumn('last4', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('last_used_at', 'text')
      .addColumn('expires_at', 'text')
      .execute();
    await db.schema.createIndex('api_keys_customer').on('api_keys').columns(['customer_id', 'created_at']).execute();

    await db.schema
      .createTable('usage_daily')
      .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
      .addColumn('day', 'text', (c) => c.notNull())
      .addColumn('method', 'text', (c) => c.notNull())
      .addColumn('route', 'text', (c) => c.notNull())
      .addColumn('requests', 'integer', (c) => c.notNull())
      .addColumn('errors', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('usage_daily_pk', ['customer_id', 'day', 'method', 'route'])
      .execute();

    await db.schema
      .createTable('agents')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('version', 'integer', (c) => c.notNull())
      .addColumn('agent_spec', 'text')
      .addColumn('draft_spec', 'text')
      .addColumn('generated_spec', 'text')
      .addColumn('test_mode_enabled', 'integer', (c) => c.notNull())
      .addColumn('project_id', 'text')
      .addColumn('knowledge_base_id', 'text')
      .addColumn('search_text', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('agents_customer_order')
      .on('agents')
      .columns(['customer_id', 'created_at', 'id'])
      .execute();
    await db.schema
      .createIndex('agents_customer_status')
      .on('agents')
      .columns(['customer_id', 'status', 'created_at'])
      .execute();

    // Exact list totals without counting rows: maintained in the same transaction as every
    // agent insert, delete and status change (count(*) over 10k agents cost 0.5 ms a request).
    await db.schema
      .createTable('agent_counts')
      .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('count', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('agent_counts_pk', ['customer_id', 'status'])
      .execute();

    await db.schema
      .createTable('jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('progress', 'integer', (c) => c.notNull())
      .addColumn('error', 'text')
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('lease_expires_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('jobs_status').on('jobs').columns(['status', 'created_at']).execute();
    await db.schema.createIndex('jobs_agent').on('jobs').columns(['agent_id', 'created_at']).execute();

    await db.schema
      .createTable('deployments')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
      .addColumn('agent_id', 'text', (c) => c.notNull().references('agents.id').onDelete('cascade'))
      .addColumn('environment', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('call_direction', 'text', (c) => c.notNull())
      .addColumn('channel_config', 'text', (c) => c.notNull())
      .addColumn('engagement_rules', 'text', (c) => c.notNull())
      .addColumn('runtime_config', 'text', (c) => c.notNull())
      .addColumn('signing_secret', 'text', (c) => c.notNull())
      .addColumn('previous_secret', 'text')
      .addColumn('previous_secret_expires_at', 'text')
      .addColumn('deployed_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('deployments_customer_order')
      .on('deployments')
      .columns(['customer_id', 'created_at', 'id'])
      .execute();
    await db.schema.createIndex('deployments_agent').on('deployments').columns(['agent_id', 'status']).execute();

    await db.schema
      .createTable('service_flags')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
  },

  async down(db: Kysely<unknown>) {
    for (const table of [
      'service_flags',
      'deployments',
      'jobs',
      'agent_counts',
      'agents',
      'usage_daily',
      'api_keys',
      'customers',
    ]) {
      await db.schema.dropTable(table).execute();
    }
  },
};
