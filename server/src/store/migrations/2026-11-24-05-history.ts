import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

/**
 * Conversation history and delivery records (README, The management API): conversations know their
 * customer, agent and end; turns the time of each state and their reply's receipt; every outbound
 * call is kept; and turn texts and replies are indexed for substring search.
 */
export const history: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('conversations').addColumn('customer_id', 'text').execute();
    await db.schema.alterTable('conversations').addColumn('agent_id', 'text').execute();
    await db.schema.alterTable('conversations').addColumn('end_reason', 'text').execute();
    await db.schema.alterTable('conversations').addColumn('ended_at', 'text').execute();
    await sql`UPDATE conversations SET
      customer_id = (SELECT customer_id FROM deployments WHERE deployments.id = conversations.deployment_id),
      agent_id = (SELECT agent_id FROM deployments WHERE deployments.id = conversations.deployment_id)`.execute(db);
    // The history list: a customer's conversations, newest first.
    await db.schema
      .createIndex('conversations_history')
      .on('conversations')
      .columns(['customer_id', 'created_at', 'id'])
      .execute();

    for (const column of ['acknowledged_at', 'resolved_at', 'reply_received_at']) {
      await db.schema.alterTable('turns').addColumn(column, 'text').execute();
    }
    await db.schema
      .alterTable('turns')
      .addColumn('reply_duplicates', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();

    await db.schema
      .createTable('deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('deployment_id', 'text', (c) => c.notNull().references('deployments.id').onDelete('cascade'))
      // No foreign key: an erased conversation's records are deleted with it, explicitly.
      .addColumn('conversation_id', 'text')
      .addColumn('turn_id', 'text')
      .addColumn('event_id', 'text')
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('attempt', 'integer', (c) => c.notNull())
      .addColumn('sent_at', 'text', (c) => c.notNull())
      .addColumn('duration_ms', 'integer', (c) => c.notNull())
      // JSON text: {headers, body} as sent, and {status, headers, body, truncated} as answered.
      .addColumn('request', 'text', (c) => c.notNull())
      .addColumn('response', 'text')
      .addColumn('error', 'text')
      .addColumn('outcome', 'text', (c) => c.notNull())
      .execute();
    // Two indexes written per turn, no more (each costs the hot path): a customer's records newest
    // first, and a conversation's (its turns' attempts, an event's attempts are found through it).
    await db.schema
      .createIndex('deliveries_customer')
      .on('deliveries')
      .columns(['customer_id', 'sent_at', 'id'])
      .execute();
    await db.schema
      .createIndex('deliveries_conversation')
      .on('deliveries')
      .columns(['conversation_id', 'sent_at'])
      .execute();
    // Tests of the hook belong to no conversation: counted for their rate limit, and purged by age.
    await db.schema
      .createIndex('deliveries_tests')
      .on('deliveries')
      .column('sent_at')
      .where(sql.ref('kind'), '=', 'test')
      .execute();

    if (db.getExecutor().adapter instanceof SqliteAdapter) await sqliteSearch(db);
    else await postgresSearch(db);
  },

  async down(db: Kysely<unknown>) {
    if (db.getExecutor().adapter instanceof SqliteAdapter) {
      for (const trigger of ['turns_search_text', 'turns_search_reply', 'conversations_search_gone'])
        await sql`DROP TRIGGER IF EXISTS ${sql.id(trigger)}`.execute(db);
      await sql`DROP TABLE IF EXISTS turn_search`.execute(db);
      await db.schema.dropTable('turn_search_rows').ifExists().execute();
      await db.schema.dropTable('turn_search_queue').ifExists().execute();
    } else {
      await db.schema.dropIndex('turns_text_trgm').ifExists().execute();
      await db.schema.dropIndex('turns_reply_trgm').ifExists().execute();
    }
    await db.schema.dropTable('deliveries').execute();
    for (const column of ['reply_duplicates', 'reply_received_at', 'resolved_at', 'acknowledged_at'])
      await db.schema.alterTable('turns').dropColumn(column).execute();
    await db.schema.dropIndex('conversations_history').execute();
    for (const column of ['ended_at', 'end_reason', 'agent_id', 'customer_id'])
      await db.schema.alterTable('conversations').dropColumn(column).execute();
  },
};

/**
 * SQLite: a contentless FTS5 trigram index of every turn text and reply (a quoted phrase of
 * trigrams is a case-insensitive substring match). FTS5 writes a segment at each commit, which
 * cost a reply about 160 µs when done in its transaction, so a turn's writer only queues its texts
 * (a plain insert, by trigger) and `SearchIndex` moves the queue into the index in batches, in the
 * background and before every search. Index rowids are the queue's AUTOINCREMENT ids, never reused;
 * `turn_search_rows` (an INTEGER PRIMARY KEY, which VACUUM never renumbers, unlike the turns' own
 * rowids) maps each to its conversation, so an erased conversation takes its entries along.
 */
async function sqliteSearch(db: Kysely<unknown>): Promise<void> {
  await sql`CREATE TABLE turn_search_queue (id INTEGER PRIMARY KEY AUTOINCREMENT, conversation_id TEXT NOT NULL, body TEXT NOT NULL)`.execute(
    db,
  );
  await db.schema
    .createTable('turn_search_rows')
    .addColumn('rowid', 'integer', (c) => c.primaryKey())
    .addColumn('conversation_id', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('turn_search_rows_conversation')
    .on('turn_search_rows')
    .column('conversation_id')
    .execute();
  await sql`CREATE VIRTUAL TABLE turn_search USING fts5(body, content='', contentless_delete=1, tokenize='trigram')`.execute(
    db,
  );
  const queued = (text: string) =>
    sql.raw(`INSERT INTO turn_search_queue (conversation_id, body) VALUES (new.conversation_id, ${text});`);
  await sql`CREATE TRIGGER turns_search_text AFTER INSERT ON turns BEGIN ${queued('new.text')} END`.execute(db);
  await sql`CREATE TRIGGER turns_search_reply AFTER UPDATE OF reply_text ON turns
    WHEN new.reply_text IS NOT NULL AND old.reply_text IS NULL BEGIN ${queued('new.reply_text')} END`.execute(db);
  await sql`CREATE TRIGGER conversations_search_gone AFTER DELETE ON conversations BEGIN
      DELETE FROM turn_search WHERE rowid IN (SELECT rowid FROM turn_search_rows WHERE conversation_id = old.id);
      DELETE FROM turn_search_rows WHERE conversation_id = old.id;
      DELETE FROM turn_search_queue WHERE conversation_id = old.id;
    END`.execute(db);
  // Turns already stored wait in the queue like new ones.
  await sql`INSERT INTO turn_search_queue (conversation_id, body) SELECT conversation_id, text FROM turns`.execute(db);
  await sql`INSERT INTO turn_search_queue (conversation_id, body) SELECT conversation_id, reply_text FROM turns WHERE reply_text IS NOT NULL`.execute(
    db,
  );
}

/**
 * PostgreSQL: trigram GIN indexes (pg_trgm) on turn texts and replies, which `ILIKE '%…%'` uses.
 * Where the extension cannot be created (no privilege), search still works, by a scan.
 */
async function postgresSearch(db: Kysely<unknown>): Promise<void> {
  await sql`SAVEPOINT trigram`.execute(db);
  try {
    // In public, not the connection's schema: an extension is one per database.
    await sql`CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public`.execute(db);
    await sql`RELEASE SAVEPOINT trigram`.execute(db);
  } catch {
    await sql`ROLLBACK TO SAVEPOINT trigram`.execute(db);
  }
  const found = await sql<{
    schema: string;
  }>`SELECT extnamespace::regnamespace::text AS schema FROM pg_extension WHERE extname = 'pg_trgm'`.execute(db);
  const schema = found.rows[0]?.schema;
  if (!schema) return;
  const opclass = sql`${sql.id(schema)}.gin_trgm_ops`;
  await sql`CREATE INDEX turns_text_trgm ON turns USING gin (text ${opclass})`.execute(db);
  await sql`CREATE INDEX turns_reply_trgm ON turns USING gin (reply_text ${opclass})`.execute(db);
}
