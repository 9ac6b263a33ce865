import { type Kysely, type Migration, SqliteAdapter, sql } from 'kysely';

/**
 * Documents fetched from a URL and refreshed (README, Answers from your documents): when to fetch
 * again, the validators that make a refresh cheap (`ETag`, `Last-Modified`), and why the last fetch
 * failed. And each passage's vector, where an embeddings endpoint gave one (hybrid search).
 *
 * On SQLite, each base gets a range of the FTS5 table's rowids (its `search_slot` times 2^32, plus a
 * count), so a search restricts itself to one base inside the index: the base's id, an unindexed
 * column, was read for every match (see the knowledge repository). The rows stored before are
 * numbered into their base's range.
 */
export const knowledgeSources: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('knowledge_documents')
      .addColumn('source', 'text', (c) => c.notNull().defaultTo('text'))
      .execute();
    for (const column of ['etag', 'last_modified', 'fetched_at', 'next_fetch_at', 'fetch_error'])
      await db.schema.alterTable('knowledge_documents').addColumn(column, 'text').execute();
    await db.schema.alterTable('knowledge_documents').addColumn('refresh_hours', 'integer').execute();
    await db.schema.createIndex('knowledge_documents_due').on('knowledge_documents').column('next_fetch_at').execute();
    // Float32 values, little-endian, base64: the same bytes on either store.
    await db.schema.alterTable('knowledge_chunks').addColumn('embedding', 'text').execute();
    // A base's vectors are read together, and its passages counted, by base.
    await db.schema.createIndex('knowledge_chunks_base').on('knowledge_chunks').column('base_id').execute();
    await db.schema
      .alterTable('knowledge_bases')
      .addColumn('search_slot', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('knowledge_bases')
      .addColumn('next_search_row', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`UPDATE knowledge_bases SET search_slot = (SELECT count(*) FROM knowledge_bases b WHERE b.id <= knowledge_bases.id),
      next_search_row = (SELECT count(*) FROM knowledge_chunks c WHERE c.base_id = knowledge_bases.id)`.execute(db);
    if (db.getExecutor().adapter instanceof SqliteAdapter) {
      await sql`CREATE TEMP TABLE numbered AS SELECT b.search_slot * 4294967296 + row_number() OVER (PARTITION BY c.base_id ORDER BY c.id) - 1 AS row, c.id, c.base_id, c.title, c.heading, c.text
        FROM knowledge_chunks c JOIN knowledge_bases b ON b.id = c.base_id`.execute(db);
      await sql`DELETE FROM knowledge_search`.execute(db);
      await sql`INSERT INTO knowledge_search (rowid, chunk_id, base_id, title, heading, text) SELECT row, id, base_id, title, heading, text FROM numbered`.execute(
        db,
      );
      await sql`DROP TABLE numbered`.execute(db);
    }
  },

  async down(db: Kysely<unknown>) {
    await db.schema.alterTable('knowledge_bases').dropColumn('next_search_row').execute();
    await db.schema.alterTable('knowledge_bases').dropColumn('search_slot').execute();
    await db.schema.dropIndex('knowledge_chunks_base').execute();
    await db.schema.alterTable('knowledge_chunks').dropColumn('embedding').execute();
    await db.schema.dropIndex('knowledge_documents_due').execute();
    for (const column of [
      'source',
      'etag',
      'last_modified',
      'fetched_at',
      'next_fetch_at',
      'fetch_error',
      'refresh_hours',
    ])
      await db.schema.alterTable('knowledge_documents').dropColumn(column).execute();
  },
};
