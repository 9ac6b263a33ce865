import type { Kysely, Migration } from 'kysely';

const REDACTED = [
  'redacted_email',
  'redacted_phone',
  'redacted_card',
  'redacted_iban',
  'redacted_name',
  'redacted_address',
];

/**
 * What is kept of what is said (README, Privacy: what is kept): each turn says how its words were
 * kept and how long they were, and each hour counts the values taken out of them, by kind.
 */
export const privacy: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('turns').addColumn('kept', 'text').execute();
    await db.schema.alterTable('turns').addColumn('text_chars', 'integer').execute();
    await db.schema.alterTable('turns').addColumn('reply_chars', 'integer').execute();
    for (const column of REDACTED)
      await db.schema
        .alterTable('analytics_hours')
        .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
  },

  async down(db: Kysely<unknown>) {
    for (const column of REDACTED) await db.schema.alterTable('analytics_hours').dropColumn(column).execute();
    for (const column of ['reply_chars', 'text_chars', 'kept'])
      await db.schema.alterTable('turns').dropColumn(column).execute();
  },
};
