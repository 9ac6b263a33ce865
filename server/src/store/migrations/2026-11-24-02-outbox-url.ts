import type { Kysely, Migration } from 'kysely';

/** Each transcript attempt now goes to the deployment's URL as it is then; the URL stored with the event was never read again. */
export const outboxUrl: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('transcript_outbox').dropColumn('url').execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema
      .alterTable('transcript_outbox')
      .addColumn('url', 'text', (c) => c.notNull().defaultTo(''))
      .execute();
  },
};
