import type { Kysely, Migration } from 'kysely';

/**
 * The analytics rollup (README, Knowing how it goes): each deployment's counts, latency bins and
 * visitors per hour, written in the same commit as what they count. A query over 92 days reads
 * a few thousand rows whatever the number of turns; purging conversations leaves them as they are.
 */
export const analytics: Migration = {
  async up(db: Kysely<unknown>) {
    const counts = [
      'conversations',
      'turns',
      'failed_hook_rejected',
      'failed_hook_failed',
      'failed_reply_timeout',
      'failed_conversation_ended',
      'handoffs',
      'feedback_up',
      'feedback_down',
    ];
    let hours = db.schema
      .createTable('analytics_hours')
      .addColumn('deployment_id', 'text', (c) => c.notNull())
      .addColumn('hour', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull());
    for (const column of counts) hours = hours.addColumn(column, 'integer', (c) => c.notNull().defaultTo(0));
    await hours.addPrimaryKeyConstraint('analytics_hours_pk', ['deployment_id', 'hour']).execute();
    await db.schema
      .createIndex('analytics_hours_customer')
      .on('analytics_hours')
      .columns(['customer_id', 'hour'])
      .execute();

    await db.schema
      .createTable('analytics_latency')
      .addColumn('deployment_id', 'text', (c) => c.notNull())
      .addColumn('hour', 'text', (c) => c.notNull())
      .addColumn('metric', 'text', (c) => c.notNull())
      .addColumn('bin', 'integer', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addColumn('count', 'integer', (c) => c.notNull())
      .addPrimaryKeyConstraint('analytics_latency_pk', ['deployment_id', 'hour', 'metric', 'bin'])
      .execute();
    await db.schema
      .createIndex('analytics_latency_customer')
      .on('analytics_latency')
      .columns(['customer_id', 'hour'])
      .execute();

    await db.schema
      .createTable('analytics_visitors')
      .addColumn('deployment_id', 'text', (c) => c.notNull())
      .addColumn('hour', 'text', (c) => c.notNull())
      .addColumn('visitor', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('agent_id', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('analytics_visitors_pk', ['deployment_id', 'hour', 'visitor'])
      .execute();
    await db.schema
      .createIndex('analytics_visitors_customer')
      .on('analytics_visitors')
      .columns(['customer_id', 'hour'])
      .execute();
  },

  async down(db: Kysely<unknown>) {
    for (const table of ['analytics_visitors', 'analytics_latency', 'analytics_hours'])
      await db.schema.dropTable(table).execute();
  },
};
