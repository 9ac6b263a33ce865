import type { Kysely, Migration } from 'kysely';

/**
 * Kept Idempotency-Key responses are now sealed under their key and the key stored as a hash.
 * Those kept before held both in the clear (new API keys, signing secrets among them): they go,
 * and a retry of one of their requests within its 24 h runs again instead of being replayed.
 */
export const sealedResponses: Migration = {
  async up(db: Kysely<unknown>) {
    await db.deleteFrom('idempotency_keys' as never).execute();
  },
  async down() {},
};
