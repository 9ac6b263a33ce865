import type { Writes } from '../audit/audit-trail.js';
import type { Config } from '../config.js';
import type { Db } from '../database.js';
import { type EgressPolicy, egressFor } from '../shared/egress.js';
import type { Parts } from '../shared/parts.js';
import { PerKeyCap } from '../shared/per-key-cap.js';
import type { Dialect } from '../store/db.js';
import type { StoreHealth } from '../store/store-health.js';
import { Embeddings } from './embeddings.js';
import { FETCHES_PER_CUSTOMER } from './knowledge-ingestion.js';
import { KnowledgeRefresh } from './knowledge.refresh.js';
import { KnowledgeService } from './knowledge.service.js';
import { DOCUMENT_READER_DEFAULTS, DocumentReader } from './sources/document-reader.js';

/**
 * Knowledge bases as the app runs them (README, Answers from your documents): the threads that
 * read documents, the service, and the pass that refreshes pages, makes missing vectors and tidies
 * the index (every `refreshEveryMs`, 5 minutes unless a test shortens it).
 */
export function openKnowledge(
  parts: Parts,
  deps: { db: Db; writes: Writes; dialect: Dialect; egress: EgressPolicy; health: StoreHealth },
  config: Pick<Config, 'embeddings' | 'documentReadTimeoutMs' | 'knowledgeQuota'>,
  refreshEveryMs: number | undefined,
): KnowledgeService {
  const reader = new DocumentReader({ ...DOCUMENT_READER_DEFAULTS, deadlineMs: config.documentReadTimeoutMs });
  parts.add({ stop: () => reader.stop() });
  const knowledge = new KnowledgeService({
    ...deps,
    embeddings: config.embeddings && new Embeddings(config.embeddings, egressFor(deps.egress, 'embeddings')),
    reader,
    fetches: new PerKeyCap(FETCHES_PER_CUSTOMER),
    quota: config.knowledgeQuota,
  });
  parts.add(
    new KnowledgeRefresh(
      { knowledge: knowledge.ingestion, health: deps.health },
      refreshEveryMs ? { everyMs: refreshEveryMs } : {},
    ),
  );
  return knowledge;
}
