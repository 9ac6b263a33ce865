import type { Kysely, Migration } from 'kysely';

const OUTCOMES = ['guardrail_refuse', 'guardrail_retry', 'guardrail_hand_off', 'guardrail_flagged'];

/**
 * Guardrails (README, Variables and guardrails): each turn keeps what its agent's guardrails
 * decided about its reply, and each hour counts the decisions, by what was done.
 */
export const guardrails: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('turns').addColumn('guardrails', 'text').execute();
    for (const column of OUTCOMES)
      await db.schema
        .alterTable('analytics_hours')
        .addColumn(column, 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
  },

  async down(db: Kysely<unknown>) {
    for (const column of OUTCOMES) await db.schema.alterTable('analytics_hours').dropColumn(column).execute();
    await db.schema.alterTable('turns').dropColumn('guardrails').execute();
  },
};
