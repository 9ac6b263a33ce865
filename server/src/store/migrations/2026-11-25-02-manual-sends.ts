import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Redeliveries now count against the test-hook limit (10 a minute per deployment, together), so
 * a record says whether the customer asked for it; the tests stored so far did.
 */
export const manualSends: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('deliveries')
      .addColumn('manual', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`update deliveries set manual = 1 where kind = 'test'`.execute(db);
    await db.schema
      .createIndex('deliveries_manual')
      .on('deliveries')
      .columns(['deployment_id', 'sent_at'])
      .where(sql.ref('manual'), '=', 1)
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('deliveries_manual').ifExists().execute();
    await db.schema.alterTable('deliveries').dropColumn('manual').execute();
  },
};
