import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import type { Database as Schema } from '../database.js';
import { migrate } from '../store/db.js';
import { FETCHES_PER_CUSTOMER } from './knowledge-ingestion.js';
import { KnowledgeService } from './knowledge.service.js';
import { DocumentReader } from './sources/document-reader.js';
import { PerKeyCap } from '../shared/per-key-cap.js';
import { auditOf, inTransaction } from '../audit/audit-trail.js';

/**
 * A store whose knowledge bases were written before bases had a range of the search index's rowids
 * (migration 2026-11-27-04 as it landed): after the next migration its passages are still found,
 * each base's only, and new documents land in their base's range.
 */
describe('knowledge bases stored before search slots [sqlite]', () => {
  const dir = mkdtempSync(join(tmpdir(), 'concierge-knowledge-migration-'));
  const db = new Kysely<Schema>({ dialect: new SqliteDialect({ database: new Database(join(dir, 'store.sqlite')) }) });
  afterAll(async () => {
    await db.destroy();
    rmSync(dir, { recursive: true, force: true });
  });

  it('numbers their passages into each base’s range, and searches each base alone', async () => {
    await migrate(db, undefined, '2026-11-27-04-knowledge');
    const now = new Date().toISOString();
    await sql`INSERT INTO customers (id, name, created_at) VALUES ('c1', 'Hotel', ${now})`.execute(db);
    for (const [base, word] of [
      ['b1', 'garage'],
      ['b2', 'garage sauna'],
    ] as const) {
      await sql`INSERT INTO knowledge_bases (id, customer_id, name, language, created_at, updated_at) VALUES (${base}, 'c1', ${base}, 'en', ${now}, ${now})`.execute(
        db,
      );
      await sql`INSERT INTO knowledge_documents (id, base_id, customer_id, title, format, url, text, chars, chunk_count, created_at, updated_at)
        VALUES (${`d-${base}`}, ${base}, 'c1', 'Guide', 'text', NULL, ${word}, 6, 1, ${now}, ${now})`.execute(db);
      await sql`INSERT INTO knowledge_chunks (id, document_id, base_id, customer_id, position, title, heading, url, text, created_at)
        VALUES (${`k-${base}`}, ${`d-${base}`}, ${base}, 'c1', 0, 'Guide', '', NULL, ${`The ${word} is open.`}, ${now})`.execute(
        db,
      );
      // As the landed code stored them: rowids of the table's own choosing.
      await sql`INSERT INTO knowledge_search (chunk_id, base_id, title, heading, text) VALUES (${`k-${base}`}, ${base}, 'Guide', '', ${`The ${word} is open.`})`.execute(
        db,
      );
    }
    await migrate(db, undefined);

    const knowledge = new KnowledgeService({
      db,
      writes: inTransaction(db),
      dialect: 'sqlite',
      egress: { allowedHosts: [] },
      embeddings: undefined,
      reader: new DocumentReader(),
      fetches: new PerKeyCap(FETCHES_PER_CUSTOMER),
      quota: { chars: 1_000_000, documents: 100 },
    });
    const found = async (base: string, q: string) =>
      (await knowledge.retrieval.search('c1', base, q, 5)).found.map((c) => c.id);
    expect(await found('b1', 'garage')).toEqual(['k-b1']);
    expect(await found('b2', 'garage')).toEqual(['k-b2']);
    expect(await found('b1', 'sauna')).toEqual([]);
    const slots = await sql<{
      id: string;
      search_slot: number;
      next_search_row: number;
    }>`SELECT id, search_slot, next_search_row FROM knowledge_bases ORDER BY id`.execute(db);
    expect(slots.rows).toEqual([
      { id: 'b1', search_slot: 1, next_search_row: 1 },
      { id: 'b2', search_slot: 2, next_search_row: 1 },
    ]);

    // A base made now takes the next slot; a document added goes on in its base's range.
    const audit = auditOf('c1', 'admin');
    const made = await knowledge.createBase('c1', { name: 'New', language: 'en' }, audit);
    await knowledge.addDocument(
      'c1',
      'b1',
      { title: 'More', text: 'The garage has a charger.', format: 'text' },
      audit,
    );
    await knowledge.addDocument('c1', made.id, { title: 'Spa', text: 'The sauna is warm.', format: 'text' }, audit);
    expect(await found('b1', 'charger garage')).toHaveLength(2);
    expect(await found(made.id, 'sauna')).toHaveLength(1);
    const rows = await sql<{
      rowid: number;
      base_id: string;
    }>`SELECT rowid, base_id FROM knowledge_search ORDER BY rowid`.execute(db);
    expect(rows.rows.map((r) => [r.base_id, Math.floor(r.rowid / 2 ** 32), r.rowid % 2 ** 32])).toEqual([
      ['b1', 1, 0],
      ['b1', 1, 1],
      ['b2', 2, 0],
      [made.id, 3, 0],
    ]);
  });
});
