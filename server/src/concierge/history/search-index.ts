import { sql } from 'kysely';
import { BackgroundLoop } from '../../shared/background-loop.js';
import type { Db } from '../../database.js';
import type { StoreHealth } from '../../store/store-health.js';
import type { Dialect } from '../../store/db.js';

/** Texts moved into the index per transaction: a batch holds the store for milliseconds. */
const BATCH = 500;

/** How often queued texts are indexed when no search asks first. */
const INDEX_EVERY_MS = 500;

/**
 * Keeps SQLite's search index (FTS5, see the history migration) up to date off the turns' commit
 * path: texts queued by the turns' writers are indexed in batches every {@link INDEX_EVERY_MS}, and before
 * every search, so a search sees every turn stored before it. PostgreSQL's indexes are kept by
 * the database itself: there this does nothing.
 */
export class SearchIndex {
  private readonly loop: BackgroundLoop | undefined;

  constructor(private readonly parts: { db: Db; dialect: Dialect; health: StoreHealth }) {
    if (parts.dialect === 'sqlite')
      this.loop = new BackgroundLoop(
        { what: 'search indexing', pass: () => this.indexQueued(), health: parts.health },
        { everyMs: INDEX_EVERY_MS },
      );
  }

  start(): void {
    this.loop?.start();
  }

  async stop(): Promise<void> {
    await this.loop?.stop();
  }

  /** Resolves once every text queued before the call is searchable (a failure shows in the search that follows). */
  async catchUp(): Promise<void> {
    await this.loop?.run();
  }

  private async indexQueued(): Promise<void> {
    for (;;) {
      const moved = await this.parts.db.transaction().execute(async (trx) => {
        const last = await sql<{
          id: number | null;
        }>`SELECT max(id) AS id FROM (SELECT id FROM turn_search_queue ORDER BY id LIMIT ${BATCH})`.execute(trx);
        const upTo = last.rows[0]?.id;
        if (upTo === null || upTo === undefined) return 0;
        await sql`INSERT INTO turn_search_rows (rowid, conversation_id) SELECT id, conversation_id FROM turn_search_queue WHERE id <= ${upTo}`.execute(
          trx,
        );
        await sql`INSERT INTO turn_search (rowid, body) SELECT id, body FROM turn_search_queue WHERE id <= ${upTo}`.execute(
          trx,
        );
        const done = await sql`DELETE FROM turn_search_queue WHERE id <= ${upTo}`.execute(trx);
        return Number(done.numAffectedRows ?? 0);
      });
      if (moved < BATCH) return;
    }
  }
}
