import type { Db, Trx } from '../database.js';
import { type Audit, auditEntry, recorded, type Writes } from '../audit/audit-trail.js';
import { AppError, notFound } from '../errors.js';
import { type Page, pageOf } from '../http/pagination.js';
import { newId } from '../shared/random.js';
import { isoNow } from '../shared/time.js';
import type { Dialect } from '../store/db.js';
import type { UploadedFile } from '../http/route.js';
import { type EgressPolicy, egressFor } from '../shared/egress.js';
import { type Embeddings, encodeVector } from './embeddings.js';
import { VectorIndex } from './vector-index.js';
import { contentWords, languageOf, searchWords, subjectWords, wordsIn } from './knowledge-words.js';
import type { DocumentSource } from './knowledge.table.js';
import { formatOf } from './sources/document-content.js';
import type { DocumentReader } from './sources/document-reader.js';
import type { ReadDocument, ReadJob } from './sources/document-reading.js';
import { type FetchedPage, fetchPage, PageUnavailable, type Validators } from './sources/page-fetch.js';
import type { PerKeyCap } from '../shared/per-key-cap.js';
import {
  chunksByIds,
  chunksOfDocument,
  chunksWithoutVectors,
  claimRefresh,
  countBases,
  countDocuments,
  customerKnowledge,
  deleteBase,
  deleteDocument,
  dueDocuments,
  findBase,
  findDocument,
  insertBase,
  type KnowledgeBaseRow,
  type KnowledgeChunkRow,
  type FoundChunk,
  type KnowledgeDocumentRow,
  listBases,
  listDocuments,
  type ListedDocument,
  saveDocument,
  searchChunks,
  setVectors,
  tidySearchIndex,
  updateBase,
  updateDocumentFields,
  vectorFingerprint,
  vectorsOf,
} from './knowledge.repository.js';
import {
  type CreateDocumentInput,
  type CreateKnowledgeBaseInput,
  KNOWLEDGE_LIMITS,
  type KnowledgeBase,
  type KnowledgeChunk,
  type KnowledgeDocument,
  type UpdateDocumentInput,
  type UploadDocumentFields,
} from './knowledge.schemas.js';

/** A page that could not be had, as the API says it: nothing was stored. */
function pageRefused(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError('invalid_request', 'The page could not be fetched', [{ path: 'url', message: errorText(err) }]);
}

const errorText = (err: unknown): string =>
  err instanceof AppError
    ? [err.message, ...(err.details ?? []).map((d) => d.message)].join(': ')
    : (err as Error).message;

const toBase = (row: Omit<KnowledgeBaseRow, 'search_slot' | 'next_search_row'>): KnowledgeBase => ({
  id: row.id,
  name: row.name,
  language: row.language,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

const toDocument = (row: ListedDocument): KnowledgeDocument => ({
  id: row.id,
  knowledge_base_id: row.base_id,
  title: row.title,
  format: row.format,
  source: row.source,
  url: row.url,
  chars: row.chars,
  chunk_count: row.chunk_count,
  refresh_hours: row.refresh_hours,
  fetched_at: row.fetched_at,
  fetch_error: row.fetch_error,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

const hoursLater = (hours: number | null): string | null =>
  hours === null ? null : new Date(Date.now() + hours * 3_600_000).toISOString();

const toChunk = (row: KnowledgeChunkRow): KnowledgeChunk => ({
  id: row.id,
  document_id: row.document_id,
  position: row.position,
  title: row.title,
  heading: row.heading,
  url: row.url,
  text: row.text,
});

/** At most this many passages go with a turn (README, Answers from your documents). */
export const MAX_PASSAGES = 5;

/** How a search found its passages: by words and meaning, or by words alone (and why). */
export interface Retrieval {
  retrieval: 'hybrid' | 'full_text';
  embeddings_error?: string;
}

/** Each ranking fused takes this many candidates; k of reciprocal rank fusion (its authors' 60). */
const FUSED_DEPTH = 20;
const RRF_K = 60;
/** How long a question's vector may take: a turn waits less than a search in the console. */
const TURN_EMBED_MS = 1_500;
const SEARCH_EMBED_MS = 5_000;
const STORE_EMBED_MS = 30_000;

/** Due documents looked at by a refresh pass, and refreshed by it at most. */
const REFRESH_CANDIDATES = 200;
const REFRESHED_PER_PASS = 20;

function byCustomer(documents: readonly KnowledgeDocumentRow[]): Map<string, KnowledgeDocumentRow[]> {
  const groups = new Map<string, KnowledgeDocumentRow[]>();
  for (const document of documents)
    groups.set(document.customer_id, [...(groups.get(document.customer_id) ?? []), document]);
  return groups;
}

/**
 * At most `count` of `due` (oldest first), taken in turn from each customer: the first of each,
 * then the second of each, and so on.
 */
function fairly(due: readonly KnowledgeDocumentRow[], count: number): KnowledgeDocumentRow[] {
  const queues = [...byCustomer(due).values()];
  const taken: KnowledgeDocumentRow[] = [];
  for (let round = 0; taken.length < count && queues.some((queue) => queue.length > round); round++)
    for (const queue of queues) if (queue[round] && taken.length < count) taken.push(queue[round]!);
  return taken;
}

/** Merge steps a pass takes at most: a few milliseconds each. */
const TIDY_STEPS = 20;

const rounded = (score: number) => Math.round(score * 10_000) / 10_000;
/** What a passage's vector is made of: where it sits, and what it says. */
const embeddingText = (c: KnowledgeChunkRow) => [c.title, c.heading, c.text].filter(Boolean).join('\n');

/** Two lists of numbers in the order of their first difference. */
const inOrder = (a: readonly number[], b: readonly number[]): number => {
  const at = a.findIndex((value, i) => value !== b[i]);
  return at < 0 ? 0 : a[at]! - b[at]!;
};

/** Passages a turn's search finds before they are ranked by the question's own words: a turn gets the best {@link MAX_PASSAGES}. */
const CANDIDATES = 20;

/** A passage handed to whoever answers a turn: the hook (`knowledge`), the model, or the knowledge responder. */
export interface Passage {
  chunk_id: string;
  document_id: string;
  title: string;
  heading: string;
  url: string | null;
  text: string;
  score: number;
}

/**
 * Knowledge bases (README, Answers from your documents): a customer's bases, their documents cut
 * into passages as they are stored, and full-text search over them on either store.
 */
/** Who changed a document, and how: its audit record. */
interface DocumentRecord {
  audit: Audit;
  verb: 'added' | 'updated' | 'refreshed' | 'deleted';
  changes: string[];
}

/** What one customer may keep in all their knowledge bases (README, Answers from your documents). */
export interface KnowledgeQuota {
  /** Characters of document text. */
  chars: number;
  documents: number;
}

/** Pages of one customer fetched at once on a node, by a request or by the refresh pass. */
export const FETCHES_PER_CUSTOMER = 2;
/** How long a page waits for its customer's place to be fetched. */
const FETCH_WAIT_MS = 30_000;

export class KnowledgeService {
  readonly #vectors = new VectorIndex();
  /** Documents were stored or deleted on this node since its search index was last tidied. */
  #untidy = false;

  constructor(
    private readonly parts: {
      db: Db;
      writes: Writes;
      dialect: Dialect;
      egress: EgressPolicy;
      embeddings: Embeddings | undefined;
      /** Reads documents off the event loop, a few per customer at once. */
      reader: DocumentReader;
      /** Pages fetched per customer at once ({@link FETCHES_PER_CUSTOMER}). */
      fetches: PerKeyCap;
      quota: KnowledgeQuota;
    },
  ) {}

  async createBase(customerId: string, input: CreateKnowledgeBaseInput, audit: Audit): Promise<KnowledgeBase> {
    if ((await countBases(this.parts.db, customerId)) >= KNOWLEDGE_LIMITS.bases)
      throw new AppError('invalid_state', `A customer has at most ${KNOWLEDGE_LIMITS.bases} knowledge bases`);
    const now = isoNow();
    const row = {
      id: newId(),
      customer_id: customerId,
      name: input.name,
      language: input.language,
      created_at: now,
      updated_at: now,
    };
    await recorded(
      this.parts.writes,
      audit,
      auditEntry('knowledge_base.created', row.id, { changes: Object.keys(input) }),
      (trx) => insertBase(trx, row),
    );
    return toBase(row);
  }

  async listBases(customerId: string, page: Page) {
    return pageOf(page, await listBases(this.parts.db, customerId, page), toBase);
  }

  async getBase(customerId: string, id: string): Promise<KnowledgeBase> {
    return toBase(await this.#base(customerId, id));
  }

  async updateBase(
    customerId: string,
    id: string,
    input: { name?: string | undefined },
    audit: Audit,
  ): Promise<KnowledgeBase> {
    const row = await this.#base(customerId, id);
    const patch = { ...(input.name !== undefined ? { name: input.name } : {}), updated_at: isoNow() };
    await recorded(
      this.parts.writes,
      audit,
      auditEntry('knowledge_base.updated', id, { changes: Object.keys(input) }),
      (trx) => updateBase(trx, id, patch),
    );
    return toBase({ ...row, ...patch });
  }

  /** The base and everything it holds. */
  async deleteBase(customerId: string, id: string, audit: Audit): Promise<{ id: string; deleted: true }> {
    await this.#base(customerId, id);
    await recorded(this.parts.writes, audit, auditEntry('knowledge_base.deleted', id, { changes: [] }), (trx) =>
      deleteBase(trx, this.parts.dialect, id),
    );
    return { id, deleted: true };
  }

  /** A document from JSON: its text, or the page at its `url`, fetched now (a page that cannot be had stores nothing). */
  async addDocument(
    customerId: string,
    baseId: string,
    input: CreateDocumentInput,
    audit: Audit,
  ): Promise<KnowledgeDocument> {
    const base = await this.#roomIn(customerId, baseId);
    const added: DocumentRecord = { audit, verb: 'added', changes: Object.keys(input) };
    if (input.text !== undefined) {
      const url = input.url ?? null;
      const read = await this.#read(customerId, {
        format: input.format,
        source: { text: input.text },
        path: 'text',
        url,
      });
      return this.#save(base, this.#newDocument(base, 'text', url, null), input.title!, read, added);
    }
    const url = input.url!;
    let page: FetchedPage;
    try {
      page = await this.#fetch(customerId, url, { etag: null, lastModified: null });
    } catch (err) {
      throw pageRefused(err);
    }
    if (!page.changed) throw pageRefused(new PageUnavailable(`${url} answered 304 to a first fetch`));
    const read = await this.#readPage(customerId, page, url);
    const document = {
      ...this.#newDocument(base, 'url', url, input.refresh_hours ?? null),
      etag: page.validators.etag,
      last_modified: page.validators.lastModified,
      fetched_at: isoNow(),
    };
    return this.#save(base, document, input.title ?? (read.content.title || url), read, added);
  }

  /** A document from an uploaded file (`.txt`, `.md`, `.html`, `.pdf`). */
  async addFile(
    customerId: string,
    baseId: string,
    file: UploadedFile,
    fields: UploadDocumentFields,
    audit: Audit,
  ): Promise<KnowledgeDocument> {
    const base = await this.#roomIn(customerId, baseId);
    const format = formatOf(file.name, file.type);
    if (!format)
      throw new AppError('invalid_request', 'The file is not one a knowledge base reads', [
        { path: 'file', message: 'send a .txt, .md, .html or .pdf file' },
      ]);
    const url = fields.url ?? null;
    const read = await this.#read(customerId, { format, source: { bytes: file.bytes }, path: 'file', url });
    const title = fields.title ?? (read.content.title || file.name.replace(/\.[a-z]+$/i, '') || 'Untitled');
    return this.#save(base, this.#newDocument(base, 'file', url, null), title, read, {
      audit,
      verb: 'added',
      changes: ['file', ...Object.keys(fields)],
    });
  }

  /**
   * A URL document fetched again now, conditionally: unchanged, it keeps its passages; changed, it
   * is cut again; a failure is kept in `fetch_error`, its passages left as they were.
   */
  async refreshDocument(customerId: string, baseId: string, id: string, audit: Audit): Promise<KnowledgeDocument> {
    const { base, document } = await this.#document(customerId, baseId, id);
    if (document.source !== 'url' || !document.url)
      throw new AppError('invalid_state', 'Only a document fetched from a URL can be refreshed');
    return toDocument(await this.#refresh(base, document, audit));
  }

  /**
   * The background pass: URL documents whose `refresh_hours` are up, taken in turn from each
   * customer with documents due (so one customer's thousand pages never hold up another's one),
   * each claimed first so two nodes never fetch one twice; at most {@link FETCHES_PER_CUSTOMER}
   * of a customer's pages are fetched at once, several customers' side by side.
   */
  async refreshDue(): Promise<number> {
    const due = fairly(await dueDocuments(this.parts.db, isoNow(), REFRESH_CANDIDATES), REFRESHED_PER_PASS);
    let refreshed = 0;
    await Promise.all(
      [...byCustomer(due).values()].map(async (documents) => {
        for (const document of documents) {
          if (!(await claimRefresh(this.parts.db, document, hoursLater(document.refresh_hours)!))) continue;
          const base = await findBase(this.parts.db, document.customer_id, document.base_id);
          if (base) await this.#refresh(base, document);
          refreshed++;
        }
      }),
    );
    return refreshed;
  }

  /** `audit` for a refresh someone asked for; the background pass is the documents' own upkeep and records none. */
  async #refresh(base: KnowledgeBaseRow, document: KnowledgeDocumentRow, audit?: Audit): Promise<KnowledgeDocumentRow> {
    const refreshed = (changes: string[]): DocumentRecord | undefined => audit && { audit, verb: 'refreshed', changes };
    const fetched_at = isoNow();
    const next_fetch_at = hoursLater(document.refresh_hours);
    try {
      const page = await this.#fetch(document.customer_id, document.url!, {
        etag: document.etag,
        lastModified: document.last_modified,
      });
      if (!page.changed) {
        const patch = { fetched_at, next_fetch_at, fetch_error: null };
        await this.#write(document.id, refreshed(['fetched_at']), (trx) =>
          updateDocumentFields(trx, document.id, patch),
        );
        return { ...document, ...patch };
      }
      const read = await this.#readPage(document.customer_id, page, document.url);
      const changed = {
        ...document,
        etag: page.validators.etag,
        last_modified: page.validators.lastModified,
        fetched_at,
        next_fetch_at,
        fetch_error: null,
      };
      await this.#save(base, changed, document.title, read, refreshed(['text', 'fetched_at']));
      return { ...changed, format: read.content.format, chars: read.chars };
    } catch (err) {
      const reason = err instanceof PageUnavailable ? err.message : errorText(err);
      const patch = { fetched_at, next_fetch_at, fetch_error: reason };
      await this.#write(document.id, refreshed(['fetch_error']), (trx) =>
        updateDocumentFields(trx, document.id, patch),
      );
      return { ...document, ...patch };
    }
  }

  /** A page of `customerId`'s, fetched when one of their places is free (FETCHES_PER_CUSTOMER). */
  async #fetch(customerId: string, url: string, last: Validators): Promise<FetchedPage> {
    const place = await this.parts.fetches.wait(customerId, FETCH_WAIT_MS, new AbortController().signal);
    if (!place) throw new PageUnavailable(`${url} waited ${FETCH_WAIT_MS / 1000} s for your other pages being fetched`);
    try {
      return await fetchPage(
        url,
        last,
        egressFor(this.parts.egress, 'knowledge', customerId),
        KNOWLEDGE_LIMITS.fileBytes,
      );
    } finally {
      place();
    }
  }

  /** A document read off the event loop (see DocumentReader), as long as a document may be. */
  #read(customerId: string, job: Omit<ReadJob, 'maxChars'>): Promise<ReadDocument> {
    return this.parts.reader.read(customerId, { ...job, maxChars: KNOWLEDGE_LIMITS.documentChars });
  }

  async #readPage(customerId: string, page: Extract<FetchedPage, { changed: true }>, url: string | null) {
    const format = formatOf('', page.mediaType) ?? formatOf(new URL(page.url).pathname, '');
    if (!format)
      throw pageRefused(
        new PageUnavailable(`${page.url} is ${page.mediaType || 'of no stated type'}: not HTML, Markdown, text or PDF`),
      );
    return this.#read(customerId, { format, source: { bytes: page.bytes }, path: 'url', url });
  }

  #newDocument(
    base: KnowledgeBaseRow,
    source: DocumentSource,
    url: string | null,
    refreshHours: number | null,
  ): KnowledgeDocumentRow {
    const now = isoNow();
    return {
      id: newId(),
      base_id: base.id,
      customer_id: base.customer_id,
      title: '',
      format: 'text',
      source,
      url,
      text: '',
      chars: 0,
      chunk_count: 0,
      refresh_hours: refreshHours,
      etag: null,
      last_modified: null,
      fetched_at: null,
      next_fetch_at: hoursLater(refreshHours),
      fetch_error: null,
      created_at: now,
      updated_at: now,
    };
  }

  /**
   * A document with its content, read and cut, stored with its passages in one transaction, within
   * the customer's quota (checked in that transaction: `409 quota_exceeded` stores nothing).
   */
  async #save(
    base: KnowledgeBaseRow,
    row: KnowledgeDocumentRow,
    title: string,
    read: ReadDocument,
    record: DocumentRecord | undefined,
  ): Promise<KnowledgeDocument> {
    const { content, chars } = read;
    const document: KnowledgeDocumentRow = {
      ...row,
      title: title.slice(0, 200),
      format: content.format,
      text: content.text,
      chars,
      updated_at: isoNow(),
    };
    const chunks = this.#chunks(document, read);
    document.chunk_count = chunks.length;
    await this.#embed(chunks);
    await this.#write(document.id, record, async (trx) => {
      await this.#withinQuota(trx, document);
      await saveDocument(trx, this.parts.dialect, document, base.language, chunks);
    });
    this.#untidy = true;
    return toDocument(document);
  }

  /** Refuses a document that would take its customer past their quota of knowledge. */
  async #withinQuota(trx: Trx, document: KnowledgeDocumentRow): Promise<void> {
    const { quota } = this.parts;
    const kept = await customerKnowledge(trx, document.customer_id, document.id);
    if (!kept.replacing && kept.documents + 1 > quota.documents)
      throw new AppError(
        'quota_exceeded',
        `Your knowledge bases hold ${kept.documents.toLocaleString('en')} documents, the most you may keep: delete some first`,
      );
    if (kept.chars + document.chars > quota.chars)
      throw new AppError(
        'quota_exceeded',
        `Your knowledge bases would hold ${(kept.chars + document.chars).toLocaleString('en')} characters; at most ${quota.chars.toLocaleString('en')}: delete documents first`,
      );
  }

  /** A document's change in one transaction, with its audit record when someone made it. */
  #write(id: string, record: DocumentRecord | undefined, change: (trx: Trx) => Promise<void>): Promise<void> {
    if (!record) return this.parts.writes.run(`knowledge_document:${id}`, change);
    const entry = auditEntry(`knowledge_document.${record.verb}`, id, { changes: record.changes });
    return recorded(this.parts.writes, record.audit, entry, change);
  }

  async listDocuments(customerId: string, baseId: string, page: Page) {
    await this.#base(customerId, baseId);
    return pageOf(page, await listDocuments(this.parts.db, baseId, page), toDocument);
  }

  async getDocument(customerId: string, baseId: string, id: string): Promise<KnowledgeDocument> {
    return toDocument((await this.#document(customerId, baseId, id)).document);
  }

  /** A changed document is cut again, its passages replaced at once: a search never sees half of it. */
  async updateDocument(
    customerId: string,
    baseId: string,
    id: string,
    input: UpdateDocumentInput,
    audit: Audit,
  ): Promise<KnowledgeDocument> {
    const { base, document: old } = await this.#document(customerId, baseId, id);
    if (old.source === 'url' && (input.text !== undefined || input.format !== undefined))
      throw new AppError(
        'invalid_state',
        "A URL document's text comes from its page: refresh it, or add the text as a new document",
      );
    if (old.source !== 'url' && input.refresh_hours !== undefined)
      throw new AppError('invalid_request', 'Invalid body', [
        { path: 'refresh_hours', message: 'only for a document fetched from a URL' },
      ]);
    if (old.source === 'url' && input.url !== undefined)
      throw new AppError('invalid_state', 'A URL document keeps its URL: add the new page as a new document');
    const format = input.format ?? old.format;
    const url = input.url !== undefined ? input.url : old.url;
    const read = await this.#read(customerId, {
      format,
      source: input.text !== undefined ? { text: input.text } : { kept: old.text },
      path: 'text',
      url,
    });
    const refresh_hours = input.refresh_hours !== undefined ? input.refresh_hours : old.refresh_hours;
    const row: KnowledgeDocumentRow = {
      ...old,
      ...(input.url !== undefined ? { url: input.url } : {}),
      refresh_hours,
      next_fetch_at: input.refresh_hours !== undefined ? hoursLater(refresh_hours) : old.next_fetch_at,
    };
    return this.#save(base, row, input.title ?? old.title, read, {
      audit,
      verb: 'updated',
      changes: Object.keys(input),
    });
  }

  async deleteDocument(
    customerId: string,
    baseId: string,
    id: string,
    audit: Audit,
  ): Promise<{ id: string; deleted: true }> {
    await this.#document(customerId, baseId, id);
    await this.#write(id, { audit, verb: 'deleted', changes: [] }, (trx) =>
      deleteDocument(trx, this.parts.dialect, id),
    );
    return { id, deleted: true };
  }

  async chunks(customerId: string, baseId: string, id: string): Promise<KnowledgeChunk[]> {
    await this.#document(customerId, baseId, id);
    return (await chunksOfDocument(this.parts.db, id)).map(toChunk);
  }

  /** The passages that best answer `question`, best first, each with the question's words it holds, and how they were found. */
  async search(customerId: string, baseId: string, question: string, limit: number) {
    const base = await this.#base(customerId, baseId);
    const words = searchWords(question);
    const { rows, ...how } = await this.#find(base, question, limit, SEARCH_EMBED_MS);
    const found = rows.map((row) => ({
      ...toChunk(row),
      score: rounded(row.score),
      matched: wordsIn(`${row.title} ${row.heading} ${row.text}`, words),
    }));
    return { found, how };
  }

  /**
   * The passages of an agent's knowledge base that answer a visitor's question, best first (at most
   * {@link MAX_PASSAGES}); none without a base, or when the base is gone. A follow-up ("how much is
   * it?") is searched with the questions it leans on (`leansOn`, newest first), but the question's
   * own words always rank first: what came before helps a question that cannot stand alone, it never
   * outranks what is asked now. Passages in the question's `language` come before others.
   */
  async passagesFor(
    customerId: string,
    baseId: string | null,
    question: string,
    about: { leansOn?: readonly string[]; language?: string | undefined } = {},
  ): Promise<Passage[]> {
    const base = baseId ? await findBase(this.parts.db, customerId, baseId) : undefined;
    if (!base) return [];
    const leansOn = about.leansOn ?? [];
    const query = leansOn.length ? [question, ...leansOn].join(' ') : question;
    const { rows } = await this.#find(base, query, CANDIDATES, TURN_EMBED_MS);
    const own = leansOn.length ? subjectWords(question) : contentWords(question);
    const earlier = leansOn.flatMap(contentWords);
    const wanted = about.language?.split('-')[0]?.toLowerCase();
    const ranked = rows
      .map((row, rank) => {
        const text = `${row.title} ${row.heading} ${row.text}`;
        const language = languageOf(row.text);
        return {
          row,
          key: [
            wanted && language && language !== wanted ? 1 : 0,
            -wordsIn(text, own).length,
            -wordsIn(text, earlier).length,
            rank,
          ],
        };
      })
      .sort((a, b) => inOrder(a.key, b.key))
      .slice(0, MAX_PASSAGES);
    return ranked.map(({ row }) => ({
      chunk_id: row.id,
      document_id: row.document_id,
      title: row.title,
      heading: row.heading,
      url: row.url,
      text: row.text,
      score: rounded(row.score),
    }));
  }

  /**
   * Full-text search, and with an embeddings endpoint also the nearest passages by meaning, the two
   * ranks fused (reciprocal rank fusion); by words alone, saying why, when the endpoint fails.
   */
  async #find(
    base: KnowledgeBaseRow,
    question: string,
    limit: number,
    embedWithinMs: number,
  ): Promise<{ rows: FoundChunk[] } & Retrieval> {
    const { db, dialect, embeddings } = this.parts;
    const byWords = await searchChunks(db, dialect, base, searchWords(question), embeddings ? FUSED_DEPTH : limit);
    if (!embeddings) return { rows: byWords, retrieval: 'full_text' };
    let query: Float32Array;
    try {
      [query] = (await embeddings.embed([question], embedWithinMs)) as [Float32Array];
    } catch (err) {
      return { rows: byWords.slice(0, limit), retrieval: 'full_text', embeddings_error: (err as Error).message };
    }
    const near = await this.#vectors.nearest(base.id, query, FUSED_DEPTH, {
      fingerprint: () => vectorFingerprint(db, base.id),
      vectors: () => vectorsOf(db, base.id),
    });
    const fused = new Map<string, number>();
    for (const ranked of [byWords, near])
      ranked.forEach(({ id }, rank) => fused.set(id, (fused.get(id) ?? 0) + 1 / (RRF_K + rank + 1)));
    const top = [...fused].sort((a, b) => b[1] - a[1]).slice(0, limit);
    const rows = new Map<string, KnowledgeChunkRow>(byWords.map((r) => [r.id, r]));
    const missing = top.map(([id]) => id).filter((id) => !rows.has(id));
    for (const row of await chunksByIds(db, base.id, missing)) rows.set(row.id, row);
    return {
      rows: top.filter(([id]) => rows.has(id)).map(([id, score]) => ({ ...rows.get(id)!, score })),
      retrieval: 'hybrid',
    };
  }

  /** Vectors for passages stored without one (the endpoint away then, or set since), a batch a pass. */
  /** A pass of upkeep on the search index after documents changed (see tidySearchIndex): a few bounded steps. */
  async tidyIndex(): Promise<void> {
    if (!this.#untidy) return;
    this.#untidy = false;
    await tidySearchIndex(this.parts.db, this.parts.dialect, TIDY_STEPS);
  }

  async embedMissing(): Promise<number> {
    const { embeddings } = this.parts;
    if (!embeddings) return 0;
    const chunks = await chunksWithoutVectors(this.parts.db, 64);
    if (!chunks.length) return 0;
    const vectors = await embeddings.embed(chunks.map(embeddingText), STORE_EMBED_MS);
    await setVectors(
      this.parts.db,
      chunks.map((c, i) => ({ id: c.id, embedding: encodeVector(vectors[i]!) })),
    );
    return chunks.length;
  }

  /** The passages' vectors, where an endpoint gives them now; else they stay for {@link embedMissing}. */
  async #embed(chunks: KnowledgeChunkRow[]): Promise<void> {
    if (!this.parts.embeddings || !chunks.length) return;
    const vectors = await this.parts.embeddings.embed(chunks.map(embeddingText), STORE_EMBED_MS).catch(() => []);
    vectors.forEach((vector, i) => (chunks[i]!.embedding = encodeVector(vector)));
  }

  #chunks(document: KnowledgeDocumentRow, read: ReadDocument): KnowledgeChunkRow[] {
    const now = isoNow();
    return read.chunks.map((chunk) => ({
      id: newId(),
      document_id: document.id,
      base_id: document.base_id,
      customer_id: document.customer_id,
      position: chunk.position,
      title: document.title,
      heading: chunk.heading,
      url: chunk.url,
      text: chunk.text,
      embedding: null,
      created_at: now,
    }));
  }

  async #base(customerId: string, id: string): Promise<KnowledgeBaseRow> {
    const base = await findBase(this.parts.db, customerId, id);
    if (!base) throw notFound('Knowledge base');
    return base;
  }

  /** The base, if it has room for one more document. */
  async #roomIn(customerId: string, baseId: string): Promise<KnowledgeBaseRow> {
    const base = await this.#base(customerId, baseId);
    if ((await countDocuments(this.parts.db, baseId)) >= KNOWLEDGE_LIMITS.documents)
      throw new AppError('invalid_state', `A knowledge base holds at most ${KNOWLEDGE_LIMITS.documents} documents`);
    return base;
  }

  async #document(customerId: string, baseId: string, id: string) {
    const base = await this.#base(customerId, baseId);
    const document = await findDocument(this.parts.db, baseId, id);
    if (!document) throw notFound('Document');
    return { base, document };
  }
}
