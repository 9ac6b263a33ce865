import type { Kysely, Migration } from 'kysely';

/** Install diagnostics (README, Knowing how it goes): per deployment and day, the origins seen and the refusals. */
export const diagnostics: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('deployment_diagnostics')
      .addColumn('deployment_id', 'text', (c) => c.notNull().references('deployments.id').onDelete('cascade'))
      .addColumn('day', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('reason', 'text', (c) => c.notNull())
      .addColumn('detail', 'text', (c) => c.notNull())
      .addColumn('count', 'integer', (c) => c.notNull())
      .addColumn('last_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('deployment_diagnostics_pk', ['deployment_id', 'day', 'kind', 'reason', 'detail'])
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropTable('deployment_diagnostics').execute();
  },
};
