import type { Kysely, Migration } from 'kysely';

/**
 * Each turn's language (README, The widget in your visitors' languages): the visitor's choice in
 * the widget's menu, else the agent's. Turns taken before it was recorded keep none.
 */
export const turnLanguage: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('turns').addColumn('language', 'text').execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('turns').dropColumn('language').execute();
  },
};
