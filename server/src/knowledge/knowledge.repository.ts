import { sql } from 'kysely';
import type { Db, Trx } from '../database.js';
import type { Page } from '../store/page.js';
import type { Dialect } from '../store/db.js';
import { type Listed, listed } from '../store/listing.js';
import type { KnowledgeBaseTable, KnowledgeChunkTable, KnowledgeDocumentTable } from './knowledge.table.js';

export type KnowledgeBaseRow = KnowledgeBaseTable;
export type KnowledgeDocumentRow = KnowledgeDocumentTable;
export type KnowledgeChunkRow = KnowledgeChunkTable;

/** A chunk a search found, with its rank (higher is better). */
export type FoundChunk = KnowledgeChunkRow & { score: number };

/** A base, given the next range of the search index's rowids. */
export async function insertBase(
  db: Db,
  row: Omit<KnowledgeBaseRow, 'search_slot' | 'next_search_row'>,
): Promise<void> {
  await db
    .insertInto('knowledge_bases')
    .values({
      ...row,
      search_slot: sql<number>`(SELECT coalesce(max(search_slot), 0) + 1 FROM knowledge_bases)`,
      next_search_row: 0,
    })
    .execute();
}

/** A base's rowids in SQLite's search index: `slot` × 2^32 onwards. */
const SLOT = 2 ** 32;

export async function findBase(db: Db, customerId: string, id: string): Promise<KnowledgeBaseRow | undefined> {
  return db
    .selectFrom('knowledge_bases')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** How many rows of `table` a customer or a base holds: what the limits count. */
async function countOf(
  db: Db,
  table: 'knowledge_bases' | 'knowledge_documents',
  column: 'customer_id' | 'base_id',
  value: string,
): Promise<number> {
  const found = await sql<{
    n: number | string;
  }>`SELECT count(*) AS n FROM ${sql.table(table)} WHERE ${sql.ref(column)} = ${value}`.execute(db);
  return Number(found.rows[0]!.n);
}

export const countBases = (db: Db, customerId: string) => countOf(db, 'knowledge_bases', 'customer_id', customerId);

export async function listBases(db: Db, customerId: string, page: Page): Promise<Listed<KnowledgeBaseRow>> {
  const matching = db.selectFrom('knowledge_bases').where('customer_id', '=', customerId);
  return listed(
    page,
    matching.selectAll().orderBy('created_at', 'desc').orderBy('id', 'desc'),
    matching.select((eb) => eb.fn.countAll<number | string>().as('total')),
  );
}

export async function updateBase(db: Db, id: string, patch: Partial<KnowledgeBaseRow>): Promise<void> {
  await db.updateTable('knowledge_bases').set(patch).where('id', '=', id).execute();
}

/** A base and everything it holds: its documents and chunks go with it (and, on SQLite, their search rows). */
export async function deleteBase(trx: Trx, dialect: Dialect, id: string): Promise<void> {
  if (dialect === 'sqlite') await sql`DELETE FROM knowledge_search WHERE base_id = ${id}`.execute(trx);
  await trx.deleteFrom('knowledge_bases').where('id', '=', id).execute();
}

export async function findDocument(db: Db, baseId: string, id: string): Promise<KnowledgeDocumentRow | undefined> {
  return db
    .selectFrom('knowledge_documents')
    .selectAll()
    .where('base_id', '=', baseId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export const countDocuments = (db: Db, baseId: string) => countOf(db, 'knowledge_documents', 'base_id', baseId);

/** What a customer keeps in all their knowledge bases, but for the document `except` (whether it is kept: a change, not an addition). */
export async function customerKnowledge(
  db: Db,
  customerId: string,
  except: string,
): Promise<{ documents: number; chars: number; replacing: boolean }> {
  const row = await db
    .selectFrom('knowledge_documents')
    .where('customer_id', '=', customerId)
    .select((eb) => [
      eb.fn.countAll<number | string>().as('documents'),
      eb.fn
        .sum<number | string | null>(eb.case().when('id', '!=', except).then(eb.ref('chars')).else(0).end())
        .as('chars'),
      eb.fn.sum<number | string | null>(eb.case().when('id', '=', except).then(1).else(0).end()).as('replacing'),
    ])
    .executeTakeFirstOrThrow();
  const replacing = Number(row.replacing ?? 0) > 0;
  return { documents: Number(row.documents) - (replacing ? 1 : 0), chars: Number(row.chars ?? 0), replacing };
}

/** A document as listed: everything but its text. */
export type ListedDocument = Omit<KnowledgeDocumentRow, 'text'>;

export async function listDocuments(db: Db, baseId: string, page: Page): Promise<Listed<ListedDocument>> {
  const matching = db.selectFrom('knowledge_documents').where('base_id', '=', baseId);
  return listed(
    page,
    matching
      .select([
        'id',
        'base_id',
        'customer_id',
        'title',
        'format',
        'url',
        'chars',
        'chunk_count',
        'source',
        'refresh_hours',
        'etag',
        'last_modified',
        'fetched_at',
        'next_fetch_at',
        'fetch_error',
        'created_at',
        'updated_at',
      ])
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc'),
    matching.select((eb) => eb.fn.countAll<number | string>().as('total')),
  );
}

export async function chunksOfDocument(db: Db, documentId: string): Promise<KnowledgeChunkRow[]> {
  return db
    .selectFrom('knowledge_chunks')
    .select([
      'id',
      'document_id',
      'base_id',
      'customer_id',
      'position',
      'title',
      'heading',
      'url',
      'text',
      'embedding',
      'created_at',
    ])
    .where('document_id', '=', documentId)
    .orderBy('position')
    .execute();
}

/** PostgreSQL's text search configuration for a base's language (its stemmer and stop words); `simple` for the rest. */
const PG_CONFIGS: Record<string, string> = {
  da: 'danish',
  de: 'german',
  en: 'english',
  es: 'spanish',
  fi: 'finnish',
  fr: 'french',
  hu: 'hungarian',
  it: 'italian',
  nl: 'dutch',
  no: 'norwegian',
  nb: 'norwegian',
  pt: 'portuguese',
  ro: 'romanian',
  ru: 'russian',
  sv: 'swedish',
  tr: 'turkish',
};
export const textSearchConfig = (language: string): string =>
  PG_CONFIGS[language.split('-')[0]!.toLowerCase()] ?? 'simple';

/** A document's chunks replaced by `chunks`, searchable as they are stored: a search sees the old ones or the new ones, never half. */
async function storeChunks(
  trx: Trx,
  dialect: Dialect,
  document: KnowledgeDocumentRow,
  language: string,
  chunks: readonly KnowledgeChunkRow[],
): Promise<void> {
  if (dialect === 'sqlite')
    await sql`DELETE FROM knowledge_search WHERE chunk_id IN (SELECT id FROM knowledge_chunks WHERE document_id = ${document.id})`.execute(
      trx,
    );
  await trx.deleteFrom('knowledge_chunks').where('document_id', '=', document.id).execute();
  const config = textSearchConfig(language);
  // In batches: well under either store's limit of parameters per statement.
  // SQLite: rowids in the base's range, taken under the transaction's write lock.
  const rows =
    dialect === 'sqlite' && chunks.length
      ? await trx
          .updateTable('knowledge_bases')
          .set((eb) => ({ next_search_row: eb('next_search_row', '+', chunks.length) }))
          .where('id', '=', document.base_id)
          .returning(['search_slot', 'next_search_row'])
          .executeTakeFirstOrThrow()
      : undefined;
  const firstRow = rows ? rows.search_slot * SLOT + rows.next_search_row - chunks.length : 0;
  for (let at = 0; at < chunks.length; at += 200) {
    const batch = chunks.slice(at, at + 200);
    if (dialect === 'sqlite') {
      await trx.insertInto('knowledge_chunks').values(batch).execute();
      await sql`INSERT INTO knowledge_search (rowid, chunk_id, base_id, title, heading, text) VALUES ${sql.join(
        batch.map((c, i) => sql`(${firstRow + at + i}, ${c.id}, ${c.base_id}, ${c.title}, ${c.heading}, ${c.text})`),
      )}`.execute(trx);
    } else
      // The search vector is written with the row (an update after would leave every row's old version to vacuum):
      // title words weighted A, headings B, the text D, as SQLite's bm25 weights them (see searchChunks).
      await trx
        .insertInto('knowledge_chunks')
        .values(
          batch.map((c) => ({
            ...c,
            search: sql`setweight(to_tsvector(${config}::regconfig, ${c.title}), 'A') || setweight(to_tsvector(${config}::regconfig, ${c.heading}), 'B') || to_tsvector(${config}::regconfig, ${c.text})`,
          })),
        )
        .execute();
  }
}

/** A document, new or changed, and its chunks, in one transaction. */
export async function saveDocument(
  trx: Trx,
  dialect: Dialect,
  document: KnowledgeDocumentRow,
  language: string,
  chunks: readonly KnowledgeChunkRow[],
): Promise<void> {
  const { id, ...rest } = document;
  await trx
    .insertInto('knowledge_documents')
    .values(document)
    .onConflict((oc) => oc.column('id').doUpdateSet(rest))
    .execute();
  await storeChunks(trx, dialect, document, language, chunks);
}

/** What a refresh changes when the page is unchanged, or could not be had. */
export async function updateDocumentFields(
  db: Db,
  id: string,
  patch: Pick<KnowledgeDocumentRow, 'fetched_at' | 'next_fetch_at' | 'fetch_error'>,
): Promise<void> {
  await db.updateTable('knowledge_documents').set(patch).where('id', '=', id).execute();
}

/** URL documents whose refresh is due, the longest-waiting first. */
export async function dueDocuments(db: Db, now: string, limit: number): Promise<KnowledgeDocumentRow[]> {
  return db
    .selectFrom('knowledge_documents')
    .selectAll()
    .where('next_fetch_at', '<=', now)
    .orderBy('next_fetch_at')
    .limit(limit)
    .execute();
}

/** Moves a due document's next fetch on, if no other node did first: true when this one may fetch it. */
export async function claimRefresh(db: Db, document: KnowledgeDocumentRow, next: string): Promise<boolean> {
  const result = await db
    .updateTable('knowledge_documents')
    .set({ next_fetch_at: next })
    .where('id', '=', document.id)
    .where('next_fetch_at', '=', document.next_fetch_at)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function deleteDocument(trx: Trx, dialect: Dialect, id: string): Promise<void> {
  if (dialect === 'sqlite')
    await sql`DELETE FROM knowledge_search WHERE chunk_id IN (SELECT id FROM knowledge_chunks WHERE document_id = ${id})`.execute(
      trx,
    );
  await trx.deleteFrom('knowledge_documents').where('id', '=', id).execute();
}

/** Words paired for the narrowing query, at most: 28 pairs. */
const PAIRED_WORDS = 8;

/** Every pair of `words` (the first {@link PAIRED_WORDS}), each pair as its two words. */
function pairsOf(words: readonly string[]): [string, string][] {
  const some = words.slice(0, PAIRED_WORDS);
  return some.flatMap((a, i) => some.slice(i + 1).map((b): [string, string] => [a, b]));
}

/**
 * The base's chunks that best match `words`, best first. A question of three words or more first
 * looks among the passages holding at least two of them (most passages holding a common word hold
 * no other word of the question, and every match is scored); when that gives fewer than `limit`,
 * among those holding any. Ranked where the index is, then only the best read whole: SQLite's FTS5 by
 * bm25 (a word in the title counts twice, in the headings 1.5 times); PostgreSQL's full text in the
 * base's language by `ts_rank`, its title, heading and text weighted the same (1, 0.75, 0.5) and a
 * long passage's count of words softened by its length. `words` are letters and digits only.
 */
export async function searchChunks(
  db: Db,
  dialect: Dialect,
  base: Pick<KnowledgeBaseRow, 'id' | 'language' | 'search_slot'>,
  words: readonly string[],
  limit: number,
): Promise<FoundChunk[]> {
  if (!words.length) return [];
  const rank = dialect === 'sqlite' ? rankedByFts5 : rankedByTsvector;
  if (words.length >= 3) {
    const narrowed = await rank(db, base, pairsOf(words), limit);
    if (narrowed.length >= limit) return narrowed;
  }
  return rank(db, base, words.flatMap(spellings), limit);
}

/** The longest word also looked for in two parts: a compound, not a visitor's row of hundreds of letters. */
const SPLIT_LETTERS = 20;

/**
 * A word as a document may write it: whole, or in two parts ("wifi" as "Wi-Fi", "checkout" as
 * "check-out"), each of two letters at least, which the index holds as two words.
 */
function spellings(word: string): string[][] {
  const parts: string[][] = [[word]];
  if (word.length <= SPLIT_LETTERS && /^\p{L}+$/u.test(word))
    for (let at = 2; at <= word.length - 2; at++) parts.push([word.slice(0, at), word.slice(at)]);
  return parts;
}

/** Chunks holding every word of any one group, by bm25. */
async function rankedByFts5(
  db: Db,
  base: Pick<KnowledgeBaseRow, 'search_slot'>,
  groups: readonly string[][],
  limit: number,
): Promise<FoundChunk[]> {
  const match = groups.map((group) => `(${group.map((w) => `"${w}"`).join(' AND ')})`).join(' OR ');
  // The base's rowid range, which FTS5 applies inside its index.
  const first = base.search_slot * SLOT;
  const rows = await sql<FoundChunk>`
    SELECT c.id, c.document_id, c.base_id, c.customer_id, c.position, c.title, c.heading, c.url, c.text, c.embedding, c.created_at,
           -s.rank AS score
    FROM (SELECT chunk_id, bm25(knowledge_search, 0, 0, 2.0, 1.5, 1.0) AS rank FROM knowledge_search
          WHERE knowledge_search MATCH ${match} AND rowid BETWEEN ${first} AND ${first + SLOT - 1}
          ORDER BY rank LIMIT ${limit}) s
    JOIN knowledge_chunks c ON c.id = s.chunk_id
    ORDER BY s.rank`.execute(db);
  return rows.rows;
}

/**
 * Chunks holding every word of any one group, by weighted `ts_rank`, which weighs every passage it is
 * given: so a bounded set is. The candidates are the passages of the rarest groups, taken rarest first
 * up to {@link GIN_CANDIDATES} (a common word alone no longer has every passage holding it ranked),
 * ranked by all the groups.
 */
async function rankedByTsvector(
  db: Db,
  base: Pick<KnowledgeBaseRow, 'id' | 'language'>,
  groups: readonly string[][],
  limit: number,
): Promise<FoundChunk[]> {
  const config = textSearchConfig(base.language);
  const tsquery = (of: readonly string[][]) =>
    sql`to_tsquery(${config}::regconfig, ${of.map((group) => `(${group.join(' & ')})`).join(' | ')})`;
  const rows = await sql<FoundChunk>`
    SELECT c.id, c.document_id, c.base_id, c.customer_id, c.position, c.title, c.heading, c.url, c.text, c.embedding, c.created_at,
           r.score
    FROM (SELECT id, ts_rank('{0.5, 0.1, 0.75, 1.0}', search, q, 1) AS score
          FROM (SELECT id, search FROM knowledge_chunks, ${tsquery(await rarestFirst(db, base, groups))} rare
                WHERE base_id = ${base.id} AND search @@ rare LIMIT ${Math.max(limit, GIN_CANDIDATES)}) found,
               ${tsquery(groups)} q
          ORDER BY score DESC, id LIMIT ${limit}) r
    JOIN knowledge_chunks c ON c.id = r.id
    ORDER BY r.score DESC, c.id`.execute(db);
  return rows.rows.map((r) => ({ ...r, score: Number(r.score) }));
}

/** Passages the rank weighs at most. */
export const GIN_CANDIDATES = 1_000;
/** Groups counted to find the rarest: a question of eight meaningful words, each also in two parts, has about 50. */
const COUNTED_GROUPS = 64;

/**
 * The groups whose passages are ranked, rarest first, while they hold at most {@link GIN_CANDIDATES}
 * passages together (the rarest always): each group counted in the index, no further than the bound.
 * More than {@link COUNTED_GROUPS} are not counted (a count each would be hundreds of index scans
 * for one odd question): all of them are returned, and the bound alone applies.
 */
async function rarestFirst(
  db: Db,
  base: Pick<KnowledgeBaseRow, 'id' | 'language'>,
  groups: readonly string[][],
): Promise<readonly string[][]> {
  // Each group is one count in the index: past COUNTED_GROUPS, the bounded set is taken unordered.
  if (groups.length < 2 || groups.length > COUNTED_GROUPS) return groups;
  const queries = groups.map((group) => group.join(' & '));
  const counted = await sql<{ at: string | number; n: string | number }>`
    SELECT g.at, (SELECT count(*) FROM (SELECT 1 FROM knowledge_chunks
                   WHERE base_id = ${base.id} AND search @@ to_tsquery(${textSearchConfig(base.language)}::regconfig, g.q)
                   LIMIT ${GIN_CANDIDATES + 1}) s) AS n
    FROM unnest(${queries}::text[]) WITH ORDINALITY AS g(q, at)`.execute(db);
  const byCount = counted.rows.map((r) => ({ at: Number(r.at) - 1, n: Number(r.n) })).sort((a, b) => a.n - b.n);
  const kept: string[][] = [];
  let passages = 0;
  for (const { at, n } of byCount) {
    if (kept.length && passages + n > GIN_CANDIDATES) break;
    kept.push([...groups[at]!]);
    passages += n;
  }
  return kept;
}

/**
 * The full-text index kept quick to read after documents changed. SQLite: stored documents add
 * segments and a search reads them all, so a pass merges them (FTS5's `merge` with a negative
 * budget: towards one segment, a bounded step at a time, so no write waits long). PostgreSQL: rows
 * inserted wait in the GIN index's pending list, read in full by every search, until it is moved
 * into the index proper. Resolves how many steps changed the index.
 */
export async function tidySearchIndex(db: Db, dialect: Dialect, steps: number): Promise<number> {
  if (dialect === 'postgres') {
    const moved = await sql<{
      pages: string | number;
    }>`SELECT gin_clean_pending_list('knowledge_chunks_search'::regclass) AS pages`.execute(db);
    return Number(moved.rows[0]!.pages) > 0 ? 1 : 0;
  }
  let changed = 0;
  for (let step = 0; step < steps; step++) {
    const before = await sql<{ n: number }>`SELECT total_changes() AS n`.execute(db);
    await sql`INSERT INTO knowledge_search(knowledge_search, rank) VALUES ('merge', -500)`.execute(db);
    const after = await sql<{ n: number }>`SELECT total_changes() AS n`.execute(db);
    // FTS5's rule: a merge that did nothing changes fewer than two rows.
    if (after.rows[0]!.n - before.rows[0]!.n < 2) break;
    changed++;
  }
  return changed;
}

/** What changes when a base's vectors do: how many there are, and the newest passage's time. */
export async function vectorFingerprint(db: Db, baseId: string): Promise<string> {
  const row = await db
    .selectFrom('knowledge_chunks')
    .select((eb) => [eb.fn.count<number | string>('embedding').as('n'), eb.fn.max('created_at').as('at')])
    .where('base_id', '=', baseId)
    .executeTakeFirst();
  return `${row?.n ?? 0}:${row?.at ?? ''}`;
}

export async function vectorsOf(db: Db, baseId: string): Promise<{ id: string; embedding: string }[]> {
  const rows = await db
    .selectFrom('knowledge_chunks')
    .select(['id', 'embedding'])
    .where('base_id', '=', baseId)
    .where('embedding', 'is not', null)
    .execute();
  return rows as { id: string; embedding: string }[];
}

export async function chunksByIds(db: Db, baseId: string, ids: readonly string[]): Promise<KnowledgeChunkRow[]> {
  if (!ids.length) return [];
  return db.selectFrom('knowledge_chunks').selectAll().where('base_id', '=', baseId).where('id', 'in', ids).execute();
}

/** Passages still without a vector (stored while the embeddings endpoint was away, or before it was set). */
export async function chunksWithoutVectors(db: Db, limit: number): Promise<KnowledgeChunkRow[]> {
  return db.selectFrom('knowledge_chunks').selectAll().where('embedding', 'is', null).limit(limit).execute();
}

export async function setVectors(db: Db, vectors: readonly { id: string; embedding: string }[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const { id, embedding } of vectors)
      await trx.updateTable('knowledge_chunks').set({ embedding }).where('id', '=', id).execute();
  });
}
