import type { Db } from '../database.js';
import { AppError, notFound } from '../errors.js';
import { type Page, pageOf } from '../http/pagination.js';
import { newId } from '../shared/random.js';
import { isoNow } from '../shared/time.js';
import type { Dialect } from '../store/db.js';
import { chunksOf } from './chunker.js';
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
  type KnowledgeChunkRow,
  type KnowledgeDocumentRow,
  listBases,
  listDocuments,
  type ListedDocument,
  saveDocument,
  searchChunks,
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
} from './knowledge.schemas.js';

const toBase = (row: KnowledgeBaseRow): KnowledgeBase => ({
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
  url: row.url,
  chars: row.chars,
  chunk_count: row.chunk_count,
  created_at: row.created_at,
  updated_at: row.updated_at,
});

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

/** A question's words as the search takes them: letters and digits, lower case, each once. */
export function wordsOf(question: string): string[] {
  return [...new Set((question.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 1))].slice(0, 32);
}

/** Of `words`, those `text` holds, by their first letters (so "rooms" finds "room", "parking" finds "park"). */
export function wordsIn(text: string, words: readonly string[]): string[] {
  const haystack = text.toLowerCase();
  return words.filter((w) => haystack.includes(w.length > 4 ? w.slice(0, w.length - 2) : w));
}

/**
 * Knowledge bases (README, Answers from your documents): a customer's bases, their documents cut
 * into passages as they are stored, and full-text search over them on either store.
 */
export class KnowledgeService {
  constructor(private readonly parts: { db: Db; dialect: Dialect }) {}

  async createBase(customerId: string, input: CreateKnowledgeBaseInput): Promise<KnowledgeBase> {
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
    await insertBase(this.parts.db, row);
    return toBase(row);
  }

  async listBases(customerId: string, page: Page) {
    return pageOf(page, await listBases(this.parts.db, customerId, page), toBase);
  }

  async getBase(customerId: string, id: string): Promise<KnowledgeBase> {
    return toBase(await this.#base(customerId, id));
  }

  async updateBase(customerId: string, id: string, input: { name?: string | undefined }): Promise<KnowledgeBase> {
    const row = await this.#base(customerId, id);
    const patch = { ...(input.name !== undefined ? { name: input.name } : {}), updated_at: isoNow() };
    await updateBase(this.parts.db, id, patch);
    return toBase({ ...row, ...patch });
  }

  /** The base and everything it holds. */
  async deleteBase(customerId: string, id: string): Promise<{ id: string; deleted: true }> {
    await this.#base(customerId, id);
    await deleteBase(this.parts.db, this.parts.dialect, id);
    return { id, deleted: true };
  }

  async addDocument(customerId: string, baseId: string, input: CreateDocumentInput): Promise<KnowledgeDocument> {
    const base = await this.#base(customerId, baseId);
    if ((await countDocuments(this.parts.db, baseId)) >= KNOWLEDGE_LIMITS.documents)
      throw new AppError('invalid_state', `A knowledge base holds at most ${KNOWLEDGE_LIMITS.documents} documents`);
    const now = isoNow();
    const document: KnowledgeDocumentRow = {
      id: newId(),
      base_id: baseId,
      customer_id: customerId,
      title: input.title,
      format: input.format,
      url: input.url ?? null,
      text: input.text,
      chars: [...input.text].length,
      chunk_count: 0,
      created_at: now,
      updated_at: now,
    };
    const chunks = this.#chunks(document);
    document.chunk_count = chunks.length;
    await saveDocument(this.parts.db, this.parts.dialect, document, base.language, chunks);
    return toDocument(document);
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
  ): Promise<KnowledgeDocument> {
    const { base, document: old } = await this.#document(customerId, baseId, id);
    const document: KnowledgeDocumentRow = {
      ...old,
      ...(input.title !== undefined ? { title: input.title } : {}),
      ...(input.format !== undefined ? { format: input.format } : {}),
      ...(input.url !== undefined ? { url: input.url } : {}),
      ...(input.text !== undefined ? { text: input.text, chars: [...input.text].length } : {}),
      updated_at: isoNow(),
    };
    const chunks = this.#chunks(document);
    document.chunk_count = chunks.length;
    await saveDocument(this.parts.db, this.parts.dialect, document, base.language, chunks);
    return toDocument(document);
  }

  async deleteDocument(customerId: string, baseId: string, id: string): Promise<{ id: string; deleted: true }> {
    await this.#document(customerId, baseId, id);
    await deleteDocument(this.parts.db, this.parts.dialect, id);
    return { id, deleted: true };
  }

  async chunks(customerId: string, baseId: string, id: string): Promise<KnowledgeChunk[]> {
    await this.#document(customerId, baseId, id);
    return (await chunksOfDocument(this.parts.db, id)).map(toChunk);
  }

  /** The passages that best answer `question`, best first, each with the question's words it holds. */
  async search(customerId: string, baseId: string, question: string, limit: number) {
    const base = await this.#base(customerId, baseId);
    const words = wordsOf(question);
    const found = await searchChunks(this.parts.db, this.parts.dialect, base, words, limit);
    return found.map((row) => ({
      ...toChunk(row),
      score: Math.round(row.score * 1000) / 1000,
      matched: wordsIn(`${row.title} ${row.heading} ${row.text}`, words),
    }));
  }

  /**
   * The passages of an agent's knowledge base that best match the visitor's words, best first (at
   * most {@link MAX_PASSAGES}); none without a base, or when the base is gone.
   */
  async passagesFor(customerId: string, baseId: string | null, words: string): Promise<Passage[]> {
    const base = baseId ? await findBase(this.parts.db, customerId, baseId) : undefined;
    if (!base) return [];
    const found = await searchChunks(this.parts.db, this.parts.dialect, base, wordsOf(words), MAX_PASSAGES);
    return found.map((row) => ({
      chunk_id: row.id,
      document_id: row.document_id,
      title: row.title,
      heading: row.heading,
      url: row.url,
      text: row.text,
      score: Math.round(row.score * 1000) / 1000,
    }));
  }

  #chunks(document: KnowledgeDocumentRow): KnowledgeChunkRow[] {
    const now = isoNow();
    return chunksOf({ title: document.title, text: document.text, format: document.format, url: document.url }).map(
      (chunk) => ({
        id: newId(),
        document_id: document.id,
        base_id: document.base_id,
        customer_id: document.customer_id,
        position: chunk.position,
        title: document.title,
        heading: chunk.heading,
        url: chunk.url,
        text: chunk.text,
        created_at: now,
      }),
    );
  }

  async #base(customerId: string, id: string): Promise<KnowledgeBaseRow> {
    const base = await findBase(this.parts.db, customerId, id);
    if (!base) throw notFound('Knowledge base');
    return base;
  }

  async #document(customerId: string, baseId: string, id: string) {
    const base = await this.#base(customerId, baseId);
    const document = await findDocument(this.parts.db, baseId, id);
    if (!document) throw notFound('Document');
    return { base, document };
  }
}
