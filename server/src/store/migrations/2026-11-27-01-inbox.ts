import type { Kysely, Migration } from 'kysely';

/**
 * The front desk's inbox (README, A person in the conversation): conversations a preview token
 * started (the console's Try it) are marked so the inbox leaves them out, and a visitor waiting for
 * a person is told once when the wait grows long.
 */
export const inbox: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('conversations')
      .addColumn('preview', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    // When the visitor was last told that nobody has come yet; against handoff_at, once per request.
    await db.schema.alterTable('conversations').addColumn('wait_told_at', 'text').execute();
    // The sweep looks only at conversations waiting for a person, oldest request first.
    await db.schema
      .createIndex('conversations_waiting_person')
      .on('conversations')
      .columns(['needs_person', 'handoff_at'])
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('conversations_waiting_person').execute();
    for (const column of ['wait_told_at', 'preview'])
      await db.schema.alterTable('conversations').dropColumn(column).execute();
  },
};
