import type { Kysely, Migration } from 'kysely';

/**
 * Greeting visitors first and the page's context (README, Greeting visitors first): the page a
 * turn was taken on, the page's context, whether the page sent events and the greeting rule that
 * approached the visitor on their conversation, and each rule's figures by the hour.
 */
export const proactive: Migration = {
  async up(db: Kysely<unknown>) {
    for (const column of ['page_url', 'page_title'])
      await db.schema.alterTable('turns').addColumn(column, 'text').execute();
    for (const column of ['page_context', 'proactive_rule', 'page_event_at'])
      await db.schema.alterTable('conversations').addColumn(column, 'text').execute();
    await db.schema
      .createTable('analytics_proactive')
      .addColumn('deployment_id', 'text', (c) => c.notNull())
      .addColumn('hour', 'text', (c) => c.notNull())
      .addColumn('rule_id', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('shown', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('opened', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('conversations', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('turns', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('analytics_proactive_pk', ['deployment_id', 'hour', 'rule_id'])
      .execute();
    await db.schema
      .createIndex('analytics_proactive_customer')
      .on('analytics_proactive')
      .columns(['customer_id', 'hour'])
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('analytics_proactive').execute();
    for (const column of ['page_event_at', 'proactive_rule', 'page_context'])
      await db.schema.alterTable('conversations').dropColumn(column).execute();
    for (const column of ['page_title', 'page_url']) await db.schema.alterTable('turns').dropColumn(column).execute();
  },
};
