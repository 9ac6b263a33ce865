import type { Kysely, Migration } from 'kysely';

/**
 * Documents fetched from a URL and refreshed (README, Answers from your documents): when to fetch
 * again, the validators that make a refresh cheap (`ETag`, `Last-Modified`), and why the last fetch
 * failed. And each passage's vector, where an embeddings endpoint gave one (hybrid search).
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
  },

  async down(db: Kysely<unknown>) {
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
