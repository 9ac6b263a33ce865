import { type Kysely, type Migration, sql } from 'kysely';

/**
 * Each conversation's next pending transcript event is marked, and delivery claims only those
 * through a partial index: the claim looked past every pending event for one with no pending
 * predecessor, which grew with the square of one conversation's backlog (seconds per pass).
 */
export const outboxHeads: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('transcript_outbox')
      .addColumn('is_head', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`
      update transcript_outbox set is_head = 1
      where status = 'pending' and id = (
        select p.id from transcript_outbox p
        where p.conversation_id = transcript_outbox.conversation_id and p.status = 'pending'
        order by p.position, p.id limit 1
      )`.execute(db);
    await db.schema
      .createIndex('transcript_outbox_heads')
      .on('transcript_outbox')
      .column('next_attempt_at')
      .where(sql.ref('is_head'), '=', 1)
      .execute();
    // The next head is found by conversation, status and position, past any number of delivered events.
    await db.schema
      .createIndex('transcript_outbox_queue')
      .on('transcript_outbox')
      .columns(['conversation_id', 'status', 'position'])
      .execute();
    await db.schema.dropIndex('transcript_outbox_order').execute();
    await db.schema.dropIndex('transcript_outbox_due').execute();
  },

  async down(db: Kysely<unknown>) {
    await db.schema
      .createIndex('transcript_outbox_due')
      .on('transcript_outbox')
      .columns(['status', 'next_attempt_at'])
      .execute();
    await db.schema
      .createIndex('transcript_outbox_order')
      .on('transcript_outbox')
      .columns(['conversation_id', 'position'])
      .execute();
    await db.schema.dropIndex('transcript_outbox_queue').execute();
    await db.schema.dropIndex('transcript_outbox_heads').execute();
    await db.schema.alterTable('transcript_outbox').dropColumn('is_head').execute();
  },
};
