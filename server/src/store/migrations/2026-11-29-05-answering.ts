import type { Kysely, Migration } from 'kysely';

/**
 * A turn a node answers itself after acknowledging it (a model streaming its reply, README, An
 * agent without a server): marked, so that when that node goes silent another takes the turn over
 * as it takes over a hook call, instead of leaving it to its reply timeout.
 */
export const answering: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('turns')
      .addColumn('answering', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('turns').dropColumn('answering').execute();
  },
};
