import type { Kysely, Migration } from 'kysely';

export const limits: Migration = {
  async up(db: Kysely<unknown>) {
    // The per-sub limit on new conversations counts a sub's recent starts on a deployment.
    await db.schema.createIndex('conversations_sub_started').on('conversations').columns(['deployment_id', 'user_sub', 'created_at']).execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('conversations_sub_started').execute();
  },
};
