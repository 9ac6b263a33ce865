import type { Kysely, Migration } from 'kysely';

export const sessions: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('conversations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('deployment_id', 'text', (c) => c.notNull().references('deployments.id').onDelete('cascade'))
      .addColumn('user_sub', 'text', (c) => c.notNull())
      .addColumn('user_name', 'text')
      .addColumn('user_ctx', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      // The seq of the last stored event: the next one is last_seq + 1, taken under the row's lock.
      .addColumn('last_seq', 'integer', (c) => c.notNull())
      .addColumn('turn_count', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('conversations_deployment')
      .on('conversations')
      .columns(['deployment_id', 'status'])
      .execute();

    await db.schema
      .createTable('conversation_events')
      .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
      .addColumn('seq', 'integer', (c) => c.notNull())
      .addColumn('type', 'text', (c) => c.notNull())
      // The frame exactly as sent to the widget, seq included: replay sends the same bytes.
      .addColumn('frame', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('conversation_events_pk', ['conversation_id', 'seq'])
      .execute();

    await db.schema
      .createTable('turns')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id').onDelete('cascade'))
      .addColumn('client_turn_id', 'text', (c) => c.notNull())
      .addColumn('text', 'text', (c) => c.notNull())
      .addColumn('mode', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('delivery_id', 'text', (c) => c.notNull())
      .addColumn('reply_text', 'text')
      .addColumn('failure_reason', 'text')
      // Set on acknowledgement: when an unanswered turn expires.
      .addColumn('expires_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addUniqueConstraint('turns_client_turn', ['conversation_id', 'client_turn_id'])
      .execute();
    await db.schema.createIndex('turns_expiry').on('turns').columns(['status', 'expires_at']).execute();
    await db.schema
      .createIndex('turns_conversation')
      .on('turns')
      .columns(['conversation_id', 'status', 'created_at'])
      .execute();

    await db.schema
      .createTable('transcript_outbox')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('deployment_id', 'text', (c) => c.notNull().references('deployments.id').onDelete('cascade'))
      .addColumn('conversation_id', 'text', (c) => c.notNull())
      // Order within a conversation: the conversation's event seq at the time, then insertion.
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'text', (c) => c.notNull())
      .addColumn('lease_expires_at', 'text')
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
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
  },

  async down(db: Kysely<unknown>) {
    for (const table of ['transcript_outbox', 'turns', 'conversation_events', 'conversations']) {
      await db.schema.dropTable(table).execute();
    }
  },
};
