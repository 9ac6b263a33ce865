import type { Kysely, Migration } from 'kysely';

/** The retention purge finds what expired by state and age, oldest first, without a scan. */
export const retention: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.createIndex('conversations_expiry').on('conversations').columns(['status', 'updated_at']).execute();
    await db.schema
      .createIndex('transcript_outbox_expiry')
      .on('transcript_outbox')
      .columns(['status', 'created_at'])
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('transcript_outbox_expiry').execute();
    await db.schema.dropIndex('conversations_expiry').execute();
  },
};
