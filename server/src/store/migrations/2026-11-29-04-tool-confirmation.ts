import type { Kysely, Migration } from 'kysely';

/**
 * A tool that needs the visitor's word (README, An agent without a server): the call the model
 * proposed, kept on its conversation until the visitor's next turn, when the same call runs.
 */
export const toolConfirmation: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('conversations').addColumn('tool_confirmation', 'text').execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('conversations').dropColumn('tool_confirmation').execute();
  },
};
