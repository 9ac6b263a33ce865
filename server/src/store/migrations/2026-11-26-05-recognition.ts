import type { Kysely, Migration } from 'kysely';

/**
 * How a spoken turn recognised by the service was heard (README, Voice in every browser): the
 * engine, the recogniser's time and the audio's length. Null on typed turns and on turns the
 * browser recognised. Never the audio itself.
 */
export const recognition: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('turns').addColumn('recognition_engine', 'text').execute();
    await db.schema.alterTable('turns').addColumn('recognition_ms', 'integer').execute();
    await db.schema.alterTable('turns').addColumn('recognition_audio_ms', 'integer').execute();
  },

  async down(db: Kysely<unknown>) {
    for (const column of ['recognition_engine', 'recognition_ms', 'recognition_audio_ms'])
      await db.schema.alterTable('turns').dropColumn(column).execute();
  },
};
