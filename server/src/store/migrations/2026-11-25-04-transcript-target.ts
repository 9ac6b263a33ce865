import { type Kysely, type Migration, sql } from 'kysely';

/** A transcript target that answered 410 Gone, or failed every attempt for 72 h, is disabled until enabled again (README, Transcript events). */
export const transcriptTarget: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('deployments')
      .addColumn('transcript_hook_status', 'text', (c) => c.notNull().defaultTo('active'))
      .execute();
    await db.schema.alterTable('deployments').addColumn('transcript_hook_disabled_at', 'text').execute();
    await db.schema.alterTable('deployments').addColumn('transcript_hook_disabled_reason', 'text').execute();
    // Every delivery pass leaves out the disabled ones: found through this, not a scan of every deployment.
    await db.schema
      .createIndex('deployments_transcript_disabled')
      .on('deployments')
      .column('id')
      .where(sql.ref('transcript_hook_status'), '=', 'disabled')
      .execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema.dropIndex('deployments_transcript_disabled').ifExists().execute();
    for (const column of ['transcript_hook_disabled_reason', 'transcript_hook_disabled_at', 'transcript_hook_status'])
      await db.schema.alterTable('deployments').dropColumn(column).execute();
  },
};
