import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

/**
 * Replies that stream and carry actions (README, Streaming a reply): each part a reply arrives in,
 * kept for the history and for telling an identical repeat from a conflict; on the turn, when the
 * first part came, how many characters the parts hold together, and the reply's actions; on a
 * delivery record, why an attempt failed.
 */
export const replyParts: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('reply_parts')
      .addColumn('turn_id', 'text', (c) => c.notNull().references('turns.id').onDelete('cascade'))
      .addColumn('part', 'integer', (c) => c.notNull())
      .addColumn('text', 'text', (c) => c.notNull())
      .addColumn('received_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('reply_parts_pk', ['turn_id', 'part'])
      .execute();
    await db.schema.alterTable('turns').addColumn('first_part_at', 'text').execute();
    await db.schema
      .alterTable('turns')
      .addColumn('part_chars', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    // JSON text of the reply's actions; null when it had none.
    await db.schema.alterTable('turns').addColumn('reply_actions', 'text').execute();
    // Why an attempt failed, in words: the network's message, or what was wrong with a 2xx answer.
    await db.schema.alterTable('deliveries').addColumn('error_detail', 'text').execute();
    // A `reply` event always carries its actions now: the ones stored before get an empty list, so a replay matches the frame's shape.
    if (db.getExecutor().adapter instanceof SqliteAdapter) {
      await sql`UPDATE conversation_events SET frame = json_set(frame, '$.actions', json('[]')) WHERE type = 'reply'`.execute(
        db,
      );
    } else {
      await sql`UPDATE conversation_events SET frame = (frame::jsonb || '{"actions":[]}'::jsonb)::text WHERE type = 'reply'`.execute(
        db,
      );
    }
  },

  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('deliveries').dropColumn('error_detail').execute();
    for (const column of ['reply_actions', 'part_chars', 'first_part_at'])
      await db.schema.alterTable('turns').dropColumn(column).execute();
    await db.schema.dropTable('reply_parts').execute();
  },
};
