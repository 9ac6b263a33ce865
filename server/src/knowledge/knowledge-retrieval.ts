import type { Db } from '../database.js';
import { notFound } from '../errors.js';
import type { Dialect } from '../store/db.js';
import type { Embeddings } from './embeddings.js';
import { contentWords, languageOf, searchWords, subjectWords, wordsIn } from './knowledge-words.js';
import {
  chunksByIds,
  findBase,
  type FoundChunk,
  type KnowledgeBaseRow,
  type KnowledgeChunkRow,
  searchChunks,
  vectorFingerprint,
  vectorsOf,
} from './knowledge.repository.js';
import { toChunk } from './knowledge.views.js';
import { VectorIndex } from './vector-index.js';

/** At most this many passages go with a turn (README, Answers from your documents). */
export const MAX_PASSAGES = 5;

/** How a search found its passages: by words and meaning, or by words alone (and why). */
export interface Retrieval {
  retrieval: 'hybrid' | 'full_text';
  embeddings_error?: string;
}

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

/** Each ranking fused takes this many candidates; k of reciprocal rank fusion (its authors' 60). */
const FUSED_DEPTH = 20;
const RRF_K = 60;
/** How long a question's vector may take: a turn waits less than a search in the console. */
const TURN_EMBED_MS = 1_500;
const SEARCH_EMBED_MS = 5_000;
/** Passages a turn's search finds before they are ranked by the question's own words: a turn gets the best {@link MAX_PASSAGES}. */
const CANDIDATES = 20;

const rounded = (score: number) => Math.round(score * 10_000) / 10_000;

/** Two lists of numbers in the order of their first difference. */
const inOrder = (a: readonly number[], b: readonly number[]): number => {
  const at = a.findIndex((value, i) => value !== b[i]);
  return at < 0 ? 0 : a[at]! - b[at]!;
};

/**
 * Finding passages (README, Answers from your documents): full-text search over a base on either
 * store, fused with the nearest passages by meaning where an embeddings endpoint is set, for the
 * console's search and for every turn of an agent with a base.
 */
export class KnowledgeRetrieval {
  readonly #vectors = new VectorIndex();

  constructor(private readonly parts: { db: Db; dialect: Dialect; embeddings: Embeddings | undefined }) {}

  /** The passages that best answer `question`, best first, each with the question's words it holds, and how they were found. */
  async search(customerId: string, baseId: string, question: string, limit: number) {
    const base = await findBase(this.parts.db, customerId, baseId);
    if (!base) throw notFound('Knowledge base');
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
}
