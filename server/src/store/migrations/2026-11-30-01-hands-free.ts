import type { Kysely, Migration } from 'kysely';

const COLUMNS = ['voice_speech_ms', 'voice_end_of_turn_ms', 'voice_first_audio_ms'] as const;

/**
 * What a hands-free turn took (README, Hands-free voice): the visitor's speech, the wait that ended
 * their turn, and from the end of their speech to the first audio of the reply (written when it is
 * sent). The recogniser's time is the turn's `recognition_ms`.
 */
export const handsFree: Migration = {
  async up(db: Kysely<unknown>) {
    for (const column of COLUMNS) await db.schema.alterTable('turns').addColumn(column, 'integer').execute();
  },

  async down(db: Kysely<unknown>) {
    for (const column of [...COLUMNS].reverse()) await db.schema.alterTable('turns').dropColumn(column).execute();
  },
};
