import type { Db, Trx } from '../database.js';
import { type Audit, auditEntry, recorded, type Writes } from '../audit/audit-trail.js';
import { AppError } from '../errors.js';
import { newId } from '../shared/random.js';
import { isoNow } from '../shared/time.js';
import type { Dialect } from '../store/db.js';
import { type EgressPolicy, egressFor } from '../shared/egress.js';
import type { PerKeyCap } from '../shared/per-key-cap.js';
import { type Embeddings, encodeVector } from './embeddings.js';
import type { DocumentSource } from './knowledge.table.js';
import { formatOf } from './sources/document-content.js';
import type { DocumentReader } from './sources/document-reader.js';
import type { ReadDocument, ReadJob } from './sources/document-reading.js';
import { type FetchedPage, fetchPage, PageUnavailable, type Validators } from './sources/page-fetch.js';
import {
  chunksWithoutVectors,
  claimRefresh,
  customerKnowledge,
  dueDocuments,
  findBase,
  type KnowledgeBaseRow,
  type KnowledgeChunkRow,
  type KnowledgeDocumentRow,
  saveDocument,
  setVectors,
  tidySearchIndex,
  updateDocumentFields,
} from './knowledge.repository.js';
import { KNOWLEDGE_LIMITS, type KnowledgeDocument } from './knowledge.schemas.js';
import { toDocument } from './knowledge.views.js';

/** A page that could not be had, as the API says it: nothing was stored. */
export function pageRefused(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError('invalid_request', 'The page could not be fetched', [{ path: 'url', message: errorText(err) }]);
}

const errorText = (err: unknown): string =>
  err instanceof AppError
    ? [err.message, ...(err.details ?? []).map((d) => d.message)].join(': ')
    : (err as Error).message;

export const hoursLater = (hours: number | null): string | null =>
  hours === null ? null : new Date(Date.now() + hours * 3_600_000).toISOString();

/** How long the passages' vectors may take as a document is stored. */
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

/** What a passage's vector is made of: where it sits, and what it says. */
const embeddingText = (c: KnowledgeChunkRow) => [c.title, c.heading, c.text].filter(Boolean).join('\n');

/** Who changed a document, and how: its audit record. */
export interface DocumentRecord {
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

export interface IngestionParts {
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
}

/**
 * Documents coming in (README, Answers from your documents): pages fetched, every document read
 * off the event loop and cut into passages, their vectors made, each stored with its passages in
 * one transaction within the customer's quota; and the upkeep passes (refreshing due pages,
 * vectors made later, the search index tidied).
 */
export class KnowledgeIngestion {
  /** Documents were stored on this node since its search index was last tidied. */
  #untidy = false;

  constructor(private readonly parts: IngestionParts) {}

  /** A page fetched for the first time, read: nothing is stored of a page that cannot be had. */
  async readNewPage(customerId: string, url: string): Promise<{ read: ReadDocument; validators: Validators }> {
    let page: FetchedPage;
    try {
      page = await this.#fetch(customerId, url, { etag: null, lastModified: null });
    } catch (err) {
      throw pageRefused(err);
    }
    if (!page.changed) throw pageRefused(new PageUnavailable(`${url} answered 304 to a first fetch`));
    return { read: await this.#readPage(customerId, page, url), validators: page.validators };
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
          if (base) await this.refresh(base, document);
          refreshed++;
        }
      }),
    );
    return refreshed;
  }

  /** `audit` for a refresh someone asked for; the background pass is the documents' own upkeep and records none. */
  async refresh(base: KnowledgeBaseRow, document: KnowledgeDocumentRow, audit?: Audit): Promise<KnowledgeDocumentRow> {
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
        await this.write(document.id, refreshed(['fetched_at']), (trx) =>
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
      await this.save(base, changed, document.title, read, refreshed(['text', 'fetched_at']));
      return { ...changed, format: read.content.format, chars: read.chars };
    } catch (err) {
      const reason = err instanceof PageUnavailable ? err.message : errorText(err);
      const patch = { fetched_at, next_fetch_at, fetch_error: reason };
      await this.write(document.id, refreshed(['fetch_error']), (trx) => updateDocumentFields(trx, document.id, patch));
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
  read(customerId: string, job: Omit<ReadJob, 'maxChars'>): Promise<ReadDocument> {
    return this.parts.reader.read(customerId, { ...job, maxChars: KNOWLEDGE_LIMITS.documentChars });
  }

  async #readPage(customerId: string, page: Extract<FetchedPage, { changed: true }>, url: string | null) {
    const format = formatOf('', page.mediaType) ?? formatOf(new URL(page.url).pathname, '');
    if (!format)
      throw pageRefused(
        new PageUnavailable(`${page.url} is ${page.mediaType || 'of no stated type'}: not HTML, Markdown, text or PDF`),
      );
    return this.read(customerId, { format, source: { bytes: page.bytes }, path: 'url', url });
  }

  newDocument(
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
  async save(
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
    await this.write(document.id, record, async (trx) => {
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
  write(id: string, record: DocumentRecord | undefined, change: (trx: Trx) => Promise<void>): Promise<void> {
    if (!record) return this.parts.writes.run(`knowledge_document:${id}`, change);
    const entry = auditEntry(`knowledge_document.${record.verb}`, id, { changes: record.changes });
    return recorded(this.parts.writes, record.audit, entry, change);
  }

  /** A pass of upkeep on the search index after documents changed (see tidySearchIndex): a few bounded steps. */
  async tidyIndex(): Promise<void> {
    if (!this.#untidy) return;
    this.#untidy = false;
    await tidySearchIndex(this.parts.db, this.parts.dialect, TIDY_STEPS);
  }

  /** Vectors for passages stored without one (the endpoint away then, or set since), a batch a pass. */
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
}
