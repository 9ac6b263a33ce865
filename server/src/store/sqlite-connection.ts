import {
  type DatabaseConnection,
  type Driver,
  Kysely,
  SqliteDialect,
  type SqliteDatabase,
  type SqliteDialectConfig,
  SqliteDriver,
} from 'kysely';
import type { Database, Db, Trx } from '../database.js';
import { type DirectRun, runsDirectly } from './query-shape.js';

/**
 * Runs `work` in a transaction of its own on SQLite's one connection, the compiled shapes it runs
 * going straight to the connection (see `runsDirectly`).
 */
export type DirectTransaction = <T>(work: (trx: Trx) => Promise<T>) => Promise<T>;

/** SQLite's one connection, as Kysely queries it and as a write batch holds it for its transaction. */
export interface SqliteConnection {
  db: Db;
  transaction: DirectTransaction;
}

/**
 * Kysely's queries and the write batch's transactions take SQLite's one connection in turn.
 * A batch's transaction skips Kysely's (its begin and commit were each a chain of promises through
 * the executor, ~15 µs of a reply at p50 under `npm run bench -- replies`): it takes the connection
 * from the same turns Kysely's queries take it from, so no query outside the batch ever runs inside
 * its transaction, and begins and commits there itself.
 */
export function sqliteConnection(statements: SqliteDatabase): SqliteConnection {
  const turns = new Turns();
  const db = new Kysely<Database>({ dialect: new TakingTurns({ database: statements }, turns) });
  let open = false;
  // A batch's units run on `held`, Kysely on the same connection with its shapes run straight there;
  // only while the batch holds it: a unit that kept it and queries later is refused, as a finished
  // transaction is.
  const prepare = (text: string) => {
    if (!open) throw new Error("A write batch's transaction was used after it ended");
    return statements.prepare(text);
  };
  const held = new Kysely<Database>({
    dialect: new SqliteDialect({ database: { close: () => {}, prepare } }),
  }) as unknown as Trx;
  const run: DirectRun = (text, parameters) => {
    const statement = prepare(text);
    if (statement.reader) return statement.all(parameters);
    statement.run(parameters);
    return [];
  };
  runsDirectly(held, run);
  const transaction: DirectTransaction = async (work) => {
    const waiting = turns.take();
    if (waiting) await waiting;
    open = true;
    try {
      run('begin', []);
      try {
        const result = await work(held);
        run('commit', []);
        return result;
      } catch (err) {
        // A failed commit may have ended the transaction already (SQLite rolls back on some errors).
        try {
          run('rollback', []);
        } catch {
          // nothing was open
        }
        throw err;
      }
    } finally {
      open = false;
      turns.give();
    }
  };
  return { db, transaction };
}

/** Who holds the connection: one at a time, the others waiting in the order they asked. */
class Turns {
  #held = false;
  readonly #waiting: (() => void)[] = [];

  /** Resolves once the connection is the caller's (at once, without waiting a tick, when it is free). */
  take(): Promise<void> | void {
    if (!this.#held) {
      this.#held = true;
      return;
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  give(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#held = false;
  }
}

/** Kysely's SQLite dialect, its driver taking the connection in {@link Turns}. */
class TakingTurns extends SqliteDialect {
  constructor(
    private readonly config: SqliteDialectConfig,
    private readonly turns: Turns,
  ) {
    super(config);
  }

  override createDriver(): Driver {
    return new TurnTakingDriver(this.config, this.turns);
  }
}

class TurnTakingDriver extends SqliteDriver {
  constructor(
    config: SqliteDialectConfig,
    private readonly turns: Turns,
  ) {
    super(config);
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    await this.turns.take();
    return super.acquireConnection();
  }

  override async releaseConnection(): Promise<void> {
    await super.releaseConnection();
    this.turns.give();
  }
}
