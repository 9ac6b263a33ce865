import { sql } from 'kysely';
import { createCustomer } from '../../server/src/customers/customer.service.js';
import { Embeddings } from '../../server/src/knowledge/embeddings.js';
import { findBase, searchChunks, tidySearchIndex } from '../../server/src/knowledge/knowledge.repository.js';
import { FETCHES_PER_CUSTOMER } from '../../server/src/knowledge/knowledge-ingestion.js';
import { KnowledgeService } from '../../server/src/knowledge/knowledge.service.js';
import { DocumentReader } from '../../server/src/knowledge/sources/document-reader.js';
import { PerKeyCap } from '../../server/src/shared/per-key-cap.js';
import { searchWords } from '../../server/src/knowledge/knowledge-words.js';
import { parseAllowedHosts } from '../../server/src/shared/egress.js';
import type { Store } from '../../server/src/store/db.js';
import { corpus, type CorpusDocument, DOC_ROOT, questions } from '../knowledge/corpus.js';
import { onEachStore } from '../scratch-stores.js';
import { type Spread, spread } from '../stats.js';
import { auditOf, inTransaction } from '../../server/src/audit/audit-trail.js';

/** The searched base holds at least this many passages (the corpus, then copies of it); each question is asked `rounds` times. */
export const KNOWLEDGE = { chunks: 50_000, rounds: 5 };

export interface KnowledgeFigures {
  store: string;
  documents: number;
  skipped: string[];
  corpusChunks: number;
  /** Passages stored a second, HTML read and cut included, one document at a time. */
  chunksPerSecond: number;
  /** Of the questions, the share whose top five hold a document that answers: the search route's, a turn's (`passagesFor`), and hybrid. */
  recall: { fullText: number; turn: number; hybrid?: number };
  /** Passages in the base the timings searched. */
  searched: number;
  /** The search route's work (words, search, the words each passage holds), the store's query alone, and a turn's retrieval. */
  search: Spread;
  query: Spread;
  turn: Spread;
}

const titleOf = (d: CorpusDocument) =>
  /<title[^>]*>([^<]*)<\/title>/i.exec(d.html)?.[1]?.replace(/\s+/g, ' ').trim() || d.path;

async function measure(name: string, store: Store): Promise<KnowledgeFigures> {
  const { documents, missing } = corpus();
  if (missing.length) console.log(`  ${name}: not on this machine, left out of the corpus: ${missing.join(', ')}`);
  const asked = questions();
  const egress = { allowedHosts: parseAllowedHosts(process.env.HOOK_ALLOWED_HOSTS ?? '') };
  const writes = inTransaction(store.db);
  const reader = new DocumentReader();
  // The corpus is copied until the index holds as many passages as the aim: no quota applies.
  const ingestion = {
    reader,
    fetches: new PerKeyCap(FETCHES_PER_CUSTOMER),
    quota: { chars: Number.MAX_SAFE_INTEGER, documents: Number.MAX_SAFE_INTEGER },
  };
  const knowledge = new KnowledgeService({
    db: store.db,
    writes,
    dialect: store.dialect,
    egress,
    embeddings: undefined,
    ...ingestion,
  });
  const { customerId } = await createCustomer(store.db, 'Bench documentation');
  const audit = auditOf(customerId, 'admin');
  const base = await knowledge.createBase(customerId, { name: 'Debian documentation', language: 'en' }, audit);
  const pathOf = new Map<string, string>();
  const skipped: string[] = [];
  const ingest = async (copy: number) => {
    let chunks = 0;
    for (const d of documents) {
      try {
        const doc = await knowledge.addDocument(
          customerId,
          base.id,
          {
            title: copy ? `${titleOf(d)} (copy ${copy})` : titleOf(d),
            text: d.html,
            format: 'html',
            url: `file://${DOC_ROOT}/${d.path}`,
          },
          audit,
        );
        pathOf.set(doc.id, d.path);
        chunks += doc.chunk_count;
      } catch (err) {
        if (!copy) skipped.push(`${d.path}: ${(err as Error).message}`);
      }
    }
    return chunks;
  };
  const started = performance.now();
  const corpusChunks = await ingest(0);
  const chunksPerSecond = corpusChunks / ((performance.now() - started) / 1000);
  while ((await tidySearchIndex(store.db, store.dialect, 50)) > 0);
  console.log(`  ${name}: ${documents.length - skipped.length} documents, ${corpusChunks} passages`);

  const recallOf = async (find: (question: string) => Promise<readonly { document_id: string }[]>) => {
    let found = 0;
    for (const question of asked)
      if ((await find(question.q)).some((p) => question.docs.includes(pathOf.get(p.document_id) ?? ''))) found++;
    return found / asked.length;
  };
  const recallWith = async (service: KnowledgeService) =>
    recallOf(async (q) => (await service.retrieval.search(customerId, base.id, q, 5)).found);
  const recall: KnowledgeFigures['recall'] = {
    fullText: await recallWith(knowledge),
    turn: await recallOf((q) => knowledge.retrieval.passagesFor(customerId, base.id, q)),
  };
  const embeddingsUrl = process.env.BENCH_EMBEDDINGS_URL;
  if (embeddingsUrl) {
    const embeddings = new Embeddings(
      {
        url: embeddingsUrl,
        model: process.env.BENCH_EMBEDDINGS_MODEL ?? 'text-embedding-3-small',
        key: process.env.BENCH_EMBEDDINGS_KEY,
      },
      egress,
    );
    const hybrid = new KnowledgeService({
      db: store.db,
      writes,
      dialect: store.dialect,
      egress,
      embeddings,
      ...ingestion,
    });
    while ((await hybrid.ingestion.embedMissing()) > 0);
    recall.hybrid = await recallWith(hybrid);
  }

  let searched = corpusChunks;
  for (let copy = 1; searched < KNOWLEDGE.chunks && corpusChunks > 0; copy++) {
    const added = await ingest(copy);
    if (!added) break;
    searched += added;
  }
  // As the service's refresh pass keeps it, a few steps every 5 minutes: merged until nothing is left to merge.
  while ((await tidySearchIndex(store.db, store.dialect, 50)) > 0);
  // The planner's statistics as autovacuum leaves them within a minute of a load this size: without
  // them PostgreSQL guesses the base holds a thousand passages and plans for that.
  if (store.dialect === 'postgres') await sql`ANALYZE knowledge_chunks`.execute(store.db);
  const row = (await findBase(store.db, customerId, base.id))!;
  const timings = { search: [] as number[], query: [] as number[], turn: [] as number[] };
  for (let round = 0; round <= KNOWLEDGE.rounds; round++)
    for (const question of asked) {
      const t0 = performance.now();
      await knowledge.retrieval.search(customerId, base.id, question.q, 5);
      const t1 = performance.now();
      await searchChunks(store.db, store.dialect, row, searchWords(question.q), 5);
      const t2 = performance.now();
      await knowledge.retrieval.passagesFor(customerId, base.id, question.q);
      const t3 = performance.now();
      // The first round warms the caches: not counted.
      if (!round) continue;
      timings.search.push(t1 - t0);
      timings.query.push(t2 - t1);
      timings.turn.push(t3 - t2);
    }
  await reader.stop();
  return {
    store: name,
    documents: documents.length - skipped.length,
    skipped,
    corpusChunks,
    chunksPerSecond,
    recall,
    searched,
    search: spread(timings.search),
    query: spread(timings.query),
    turn: spread(timings.turn),
  };
}

/** The corpus stored, its questions asked, then the base grown to {@link KNOWLEDGE}.chunks and searched; on each store. */
export function knowledgeFigures(): Promise<KnowledgeFigures[]> {
  return onEachStore('knowledge', measure);
}
