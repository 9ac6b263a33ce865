import type { Kysely, Migration } from 'kysely';

/**
 * Agents that answer with a model (README, An agent without a server): the customers' model
 * endpoints (keys sealed), a model call's own figures on its delivery record, and the turns a
 * model failed, counted beside the hook's failures.
 */
export const modelResponder: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('model_endpoints')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('base_url', 'text', (c) => c.notNull())
      .addColumn('api_key_sealed', 'text')
      .addColumn('api_key_last4', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('model_endpoints_customer')
      .on('model_endpoints')
      .columns(['customer_id', 'created_at'])
      .execute();
    for (const column of ['first_token_ms', 'tokens_in', 'tokens_out'])
      await db.schema.alterTable('deliveries').addColumn(column, 'integer').execute();
    await db.schema
      .alterTable('analytics_hours')
      .addColumn('failed_model_failed', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('analytics_hours').dropColumn('failed_model_failed').execute();
    for (const column of ['tokens_out', 'tokens_in', 'first_token_ms'])
      await db.schema.alterTable('deliveries').dropColumn(column).execute();
    await db.schema.dropTable('model_endpoints').execute();
  },
};
