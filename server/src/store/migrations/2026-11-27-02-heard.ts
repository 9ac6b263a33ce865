import type { Kysely, Migration } from 'kysely';

/**
 * What the visitor heard of a spoken reply (README, The agent's own voice): the sentences played,
 * the interrupted one cut at its last word heard, and when the widget last said so.
 */
export const heard: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('turns').addColumn('heard_text', 'text').execute();
    await db.schema.alterTable('turns').addColumn('heard_interrupted', 'integer').execute();
    await db.schema.alterTable('turns').addColumn('heard_at', 'text').execute();
  },

  async down(db: Kysely<unknown>) {
    for (const column of ['heard_at', 'heard_interrupted', 'heard_text'])
      await db.schema.alterTable('turns').dropColumn(column).execute();
  },
};
