import type { Kysely, Migration } from 'kysely';

export const limits: Migration = {
  async up(db: Kysely<unknown>) {
    // The per-sub limit on new conversations counts a sub's recent starts on a deployment.
    await db.schema
      .createIndex('conversations_sub_started')
      .on('conversations')
      .columns(['deployment_id', 'user_sub', 'created_at'])
      .execute();

    await db.schema
      .createTable('idempotency_keys')
      .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
      .addColumn('key', 'text', (c) => c.notNull())
      .addColumn('fingerprint', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('response_status', 'integer')
      .addColumn('response_headers', 'text')
      .addColumn('response_body', 'text')
      .addColumn('locked_until', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['customer_id', 'key'])
      .execute();
    await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('idempotency_keys').execute();
    await db.schema.dropIndex('conversations_sub_started').execute();
  },
};
