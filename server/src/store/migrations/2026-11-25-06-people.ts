import type { Kysely, Migration } from 'kysely';

/**
 * People in the conversation (README, A person in the conversation): who handles a conversation
 * (the agent, or a person by the name visitors see), whether it needs a person and why, and who
 * answered each turn.
 */
export const people: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('conversations')
      .addColumn('handler', 'text', (c) => c.notNull().defaultTo('agent'))
      .execute();
    await db.schema.alterTable('conversations').addColumn('handler_name', 'text').execute();
    await db.schema
      .alterTable('conversations')
      .addColumn('needs_person', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('conversations').addColumn('handoff_reason', 'text').execute();
    // When who handles it (or whether it needs a person) last changed: the activity stream's catch-up.
    await db.schema.alterTable('conversations').addColumn('handoff_at', 'text').execute();
    // The activity stream resumes from the customer's conversations touched since its last event.
    await db.schema
      .createIndex('conversations_activity')
      .on('conversations')
      .columns(['customer_id', 'updated_at'])
      .execute();
    // The name of the person who answered a turn; null when the agent did (or nobody has yet).
    await db.schema.alterTable('turns').addColumn('replied_by', 'text').execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('turns').dropColumn('replied_by').execute();
    await db.schema.dropIndex('conversations_activity').execute();
    for (const column of ['handoff_at', 'handoff_reason', 'needs_person', 'handler_name', 'handler'])
      await db.schema.alterTable('conversations').dropColumn(column).execute();
  },
};
