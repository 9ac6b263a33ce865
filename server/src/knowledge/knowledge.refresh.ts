import { BackgroundLoop } from '../shared/background-loop.js';
import type { StoreHealth } from '../store/store-health.js';
import type { KnowledgeIngestion } from './knowledge-ingestion.js';

/**
 * Fetches again the URL documents whose `refresh_hours` are up (README, Answers from your
 * documents), every `everyMs` (5 minutes): a page that did not change costs one conditional GET.
 * Then gives vectors to passages stored without one, where an embeddings endpoint is set, and
 * tidies SQLite's search index after documents changed.
 */
export class KnowledgeRefresh {
  readonly #loop: BackgroundLoop;

  constructor(parts: { knowledge: KnowledgeIngestion; health: StoreHealth }, settings: { everyMs?: number } = {}) {
    this.#loop = new BackgroundLoop(
      {
        what: 'knowledge refresh',
        pass: async () => {
          await parts.knowledge.refreshDue();
          await parts.knowledge.embedMissing();
          await parts.knowledge.tidyIndex();
        },
        health: parts.health,
      },
      { everyMs: settings.everyMs ?? 300_000 },
    );
  }

  start(): void {
    this.#loop.start();
  }

  /** A pass now (tests, and nodes that would rather not wait): resolves when it ends. */
  run(): Promise<void> {
    return this.#loop.run();
  }

  stop(): Promise<void> {
    return this.#loop.stop();
  }
}
