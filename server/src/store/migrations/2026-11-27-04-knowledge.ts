import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

/**
 * Knowledge bases (README, Answers from your documents): bases, their documents, and the passages
 * each document is cut into, searchable by full text on either store. SQLite: an FTS5 table whose
 * rows carry their chunk's id, kept in the same transaction as the chunks (see the knowledge
 * repository). PostgreSQL: a `tsvector` per chunk in its base's language, under a GIN index.
 */
export const knowledge: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('knowledge_bases')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('customer_id', 'text', (c) => c.notNull().references('customers.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('language', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('knowledge_bases_customer')
      .on('knowledge_bases')
      .columns(['customer_id', 'created_at'])
      .execute();
    await db.schema
      .createTable('knowledge_documents')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('base_id', 'text', (c) => c.notNull().references('knowledge_bases.id').onDelete('cascade'))
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('format', 'text', (c) => c.notNull())
      .addColumn('url', 'text')
      .addColumn('text', 'text', (c) => c.notNull())
      .addColumn('chars', 'integer', (c) => c.notNull())
      .addColumn('chunk_count', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('knowledge_documents_base')
      .on('knowledge_documents')
      .columns(['base_id', 'created_at'])
      .execute();
    await db.schema
      .createTable('knowledge_chunks')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('document_id', 'text', (c) => c.notNull().references('knowledge_documents.id').onDelete('cascade'))
      .addColumn('base_id', 'text', (c) => c.notNull())
      .addColumn('customer_id', 'text', (c) => c.notNull())
      .addColumn('position', 'integer', (c) => c.notNull())
      .addColumn('title', 'text', (c) => c.notNull())
      .addColumn('heading', 'text', (c) => c.notNull())
      .addColumn('url', 'text')
      .addColumn('text', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('knowledge_chunks_document')
      .on('knowledge_chunks')
      .columns(['document_id', 'position'])
      .execute();
    // The passages a turn was given, as JSON: what the conversation detail shows.
    await db.schema.alterTable('turns').addColumn('knowledge', 'text').execute();
    if (db.getExecutor().adapter instanceof SqliteAdapter) {
      await sql`CREATE VIRTUAL TABLE knowledge_search USING fts5(chunk_id UNINDEXED, base_id UNINDEXED, title, heading, text, tokenize='porter unicode61 remove_diacritics 2')`.execute(
        db,
      );
    } else {
      // Set in the transaction that stores the chunk, in its base's language (see the knowledge repository).
      await sql`ALTER TABLE knowledge_chunks ADD COLUMN search tsvector`.execute(db);
      await sql`CREATE INDEX knowledge_chunks_search ON knowledge_chunks USING gin (search)`.execute(db);
    }
  },

  async down(db: Kysely<unknown>) {
    if (db.getExecutor().adapter instanceof SqliteAdapter) await sql`DROP TABLE knowledge_search`.execute(db);
    await db.schema.alterTable('turns').dropColumn('knowledge').execute();
    await db.schema.dropTable('knowledge_chunks').execute();
    await db.schema.dropTable('knowledge_documents').execute();
    await db.schema.dropTable('knowledge_bases').execute();
  },
};
