import type { Db, Trx } from '../database.js';
import type { DirectTransaction } from './sqlite-connection.js';

const DEFAULTS = { concurrency: 1, maxBatch: 256 };

interface Unit {
  /** What the unit locks (a conversation id); units of one key run in the order asked. */
  key: string;
  work(trx: Trx): Promise<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/**
 * Group commit: the transactions asked for while the previous batch ran (or within one
 * event-loop tick) commit together as one. A commit costs more than the few statements of a
 * turn change, so this multiplies the write rate under load and costs one tick when idle.
 *
 * Locks are taken in key order within a batch, and a key is in at most one batch in flight, so
 * batches running at once on a PostgreSQL pool, or on two nodes, do not deadlock on each
 * other's rows. If anything in a batch fails anyway, the batch rolls back and each unit runs
 * again in a transaction of its own, so one unit's error never fails another's work.
 *
 * A unit must touch the store only through the `trx` it is given: on SQLite's single
 * connection, a query outside it would wait for the batch it is part of.
 */
export class WriteBatcher {
  #queue: Unit[] = [];
  readonly #busyKeys = new Set<string>();
  #running = 0;
  #scheduled = false;

  readonly #settings: typeof DEFAULTS & { direct?: DirectTransaction };

  /**
   * `concurrency`: batches in flight at once, 1 on SQLite's single connection, a few on a
   * PostgreSQL pool. `direct` (SQLite): the batch's transaction, on the connection itself, its compiled
   * statements run straight there (see `sqliteConnection`). `lastly`: what every transaction writes
   * after its units (the analytics rollup, in key order, so batches running at once never deadlock
   * on its shared rows).
   */
  constructor(
    private readonly db: Db,
    settings: Partial<typeof DEFAULTS> & { direct?: DirectTransaction } = {},
    private readonly lastly?: (trx: Trx) => Promise<void>,
  ) {
    this.#settings = { ...DEFAULTS, ...settings };
  }

  run<T>(key: string, work: (trx: Trx) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ key, work, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.#scheduled || this.#running >= this.#settings.concurrency || !this.#queue.length) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      const batch = this.take();
      if (!batch.length) return;
      this.#running++;
      for (const unit of batch) this.#busyKeys.add(unit.key);
      void this.commit(batch).finally(() => {
        for (const unit of batch) this.#busyKeys.delete(unit.key);
        this.#running--;
        this.schedule();
      });
      this.schedule();
    });
  }

  /** The next batch: queued units whose key no batch in flight holds, stably sorted by key. */
  private take(): Unit[] {
    const batch: Unit[] = [];
    const blocked = new Set<string>();
    const rest: Unit[] = [];
    for (const unit of this.#queue) {
      // A unit waits behind a busy or skipped one of its key, so each key keeps its order.
      if (batch.length >= this.#settings.maxBatch || this.#busyKeys.has(unit.key) || blocked.has(unit.key)) {
        blocked.add(unit.key);
        rest.push(unit);
      } else batch.push(unit);
    }
    this.#queue = rest;
    return batch.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  private async commit(batch: Unit[]): Promise<void> {
    if (batch.length > 1) {
      try {
        const results = await this.transaction(async (trx) => {
          const out: unknown[] = [];
          for (const unit of batch) out.push(await unit.work(trx));
          await this.lastly?.(trx);
          return out;
        });
        batch.forEach((unit, i) => unit.resolve(results[i]));
        return;
      } catch {
        // fall through: each unit alone, so only the failing one reports its error
      }
    }
    for (const unit of batch) {
      await this.transaction(async (trx) => {
        const result = await unit.work(trx);
        await this.lastly?.(trx);
        return result;
      }).then(unit.resolve, unit.reject);
    }
  }

  private transaction<T>(work: (trx: Trx) => Promise<T>): Promise<T> {
    const { direct } = this.#settings;
    return direct ? direct(work) : this.db.transaction().execute(work);
  }
}
