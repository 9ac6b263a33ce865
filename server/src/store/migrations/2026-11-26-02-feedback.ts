import type { Kysely, Migration } from 'kysely';

/** A visitor's rating of a turn's reply (README, Knowing how it goes): the last one counts. */
export const feedback: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('turns').addColumn('feedback_rating', 'text').execute();
    await db.schema.alterTable('turns').addColumn('feedback_comment', 'text').execute();
    await db.schema.alterTable('turns').addColumn('feedback_at', 'text').execute();
  },

  async down(db: Kysely<unknown>) {
    for (const column of ['feedback_at', 'feedback_comment', 'feedback_rating'])
      await db.schema.alterTable('turns').dropColumn(column).execute();
  },
};
