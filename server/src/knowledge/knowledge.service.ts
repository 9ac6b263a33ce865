import { type Audit, auditEntry, recorded } from '../audit/audit-trail.js';
import { AppError, notFound } from '../errors.js';
import { type Page, pageOf } from '../http/pagination.js';
import type { UploadedFile } from '../http/route.js';
import { newId } from '../shared/random.js';
import { isoNow } from '../shared/time.js';
import { type DocumentRecord, hoursLater, type IngestionParts, KnowledgeIngestion } from './knowledge-ingestion.js';
import { KnowledgeRetrieval } from './knowledge-retrieval.js';
import { formatOf } from './sources/document-content.js';
import {
  chunksOfDocument,
  countBases,
  countDocuments,
  deleteBase,
  deleteDocument,
  findBase,
  findDocument,
  insertBase,
  type KnowledgeBaseRow,
  type KnowledgeDocumentRow,
  listBases,
  listDocuments,
  updateBase,
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
import { toBase, toChunk, toDocument } from './knowledge.views.js';

/**
 * Knowledge bases (README, Answers from your documents): a customer's bases and their documents as
 * the API manages them. What comes in is read and stored by its {@link KnowledgeIngestion}, and
 * passages are found by its {@link KnowledgeRetrieval}.
 */
export class KnowledgeService {
  readonly ingestion: KnowledgeIngestion;
  readonly retrieval: KnowledgeRetrieval;

  constructor(private readonly parts: IngestionParts) {
    this.ingestion = new KnowledgeIngestion(parts);
    this.retrieval = new KnowledgeRetrieval(parts);
  }

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
    const { ingestion } = this;
    const base = await this.#roomIn(customerId, baseId);
    const added: DocumentRecord = { audit, verb: 'added', changes: Object.keys(input) };
    if (input.text !== undefined) {
      const url = input.url ?? null;
      const read = await ingestion.read(customerId, {
        format: input.format,
        source: { text: input.text },
        path: 'text',
        url,
      });
      return ingestion.save(base, ingestion.newDocument(base, 'text', url, null), input.title!, read, added);
    }
    const url = input.url!;
    const { read, validators } = await ingestion.readNewPage(customerId, url);
    const document = {
      ...ingestion.newDocument(base, 'url', url, input.refresh_hours ?? null),
      etag: validators.etag,
      last_modified: validators.lastModified,
      fetched_at: isoNow(),
    };
    return ingestion.save(base, document, input.title ?? (read.content.title || url), read, added);
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
    const read = await this.ingestion.read(customerId, { format, source: { bytes: file.bytes }, path: 'file', url });
    const title = fields.title ?? (read.content.title || file.name.replace(/\.[a-z]+$/i, '') || 'Untitled');
    return this.ingestion.save(base, this.ingestion.newDocument(base, 'file', url, null), title, read, {
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
    return toDocument(await this.ingestion.refresh(base, document, audit));
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
    const read = await this.ingestion.read(customerId, {
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
    return this.ingestion.save(base, row, input.title ?? old.title, read, {
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
    await this.ingestion.write(id, { audit, verb: 'deleted', changes: [] }, (trx) =>
      deleteDocument(trx, this.parts.dialect, id),
    );
    return { id, deleted: true };
  }

  async chunks(customerId: string, baseId: string, id: string): Promise<KnowledgeChunk[]> {
    await this.#document(customerId, baseId, id);
    return (await chunksOfDocument(this.parts.db, id)).map(toChunk);
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
