import type { Db } from './database.js';

interface Unit {
  work(trx: Db): Promise<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/**
 * Group commit: the transactions asked for while the previous batch ran (or within one
 * event-loop tick) commit together as one. A commit costs more than the few statements of a
 * turn change, so this multiplies the write rate under load and costs one tick when idle.
 * If anything in a batch fails, the batch rolls back and each unit runs again in a
 * transaction of its own, so one unit's error never fails another's work.
 *
 * A unit must touch the store only through the `trx` it is given: on SQLite's single
 * connection, a query outside it would wait for the batch it is part of.
 */
export class WriteBatcher {
  #queue: Unit[] = [];
  #running = 0;
  #scheduled = false;

  constructor(
    private readonly db: Db,
    /** Batches in flight at once: 1 on SQLite's single connection, a few on a PostgreSQL pool. */
    private readonly concurrency = 1,
    private readonly maxBatch = 256,
  ) {}

  run<T>(work: (trx: Db) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.#scheduled || this.#running >= this.concurrency || !this.#queue.length) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      if (this.#running >= this.concurrency || !this.#queue.length) return;
      this.#running++;
      void this.commit(this.#queue.splice(0, this.maxBatch)).finally(() => {
        this.#running--;
        this.schedule();
      });
    });
  }

  private async commit(batch: Unit[]): Promise<void> {
    if (batch.length > 1) {
      try {
        const results = await this.db.transaction().execute(async (trx) => {
          const out: unknown[] = [];
          for (const unit of batch) out.push(await unit.work(trx));
          return out;
        });
        batch.forEach((unit, i) => unit.resolve(results[i]));
        return;
      } catch {
        // fall through: each unit alone, so only the failing one reports its error
      }
    }
    await Promise.all(
      batch.map((unit) =>
        this.db
          .transaction()
          .execute((trx) => unit.work(trx))
          .then(unit.resolve, unit.reject),
      ),
    );
  }
}
