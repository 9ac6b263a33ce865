import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database, Db } from '../database.js';
import { migrations } from './migrations/index.js';
import { SqliteCheckpointer } from './sqlite-checkpointer.js';
import { preparedNameOf } from './query-shape.js';
import { type DirectTransaction, sqliteConnection } from './sqlite-connection.js';

/** Which store: SQLite has one writer (its reads are its claims); PostgreSQL serves many nodes (claims skip rows another holds). */
export type Dialect = 'sqlite' | 'postgres';

export interface StoreOptions {
  /** `postgres://...`: PostgreSQL; otherwise SQLite in `dataDir`. */
  databaseUrl?: string | undefined;
  dataDir: string;
  /** PostgreSQL schema to work in (tests give each file its own); created when missing. */
  pgSchema?: string;
}

export interface Store {
  readonly db: Db;
  readonly dialect: Dialect;
  /** Where the data lives, without credentials: safe to log. */
  readonly location: string;
  ping(): Promise<void>;
  close(): Promise<void>;
  /** SQLite only: a transaction that holds the one connection and runs its compiled statements there at once. */
  readonly direct?: DirectTransaction;
  /** PostgreSQL only: a channel between the nodes sharing this store (one LISTEN connection). */
  openChannel?(listener: ChannelListener): Promise<StoreChannel>;
}

export interface ChannelListener {
  message(payload: string): void;
  /** The LISTEN connection was lost; it is being reopened. */
  lost(err: Error): void;
  /** Listening again after a loss: whatever was sent meanwhile was missed. */
  restored(): void;
}

export interface StoreChannel {
  /** Sent outside any transaction: NOTIFY inside one measured at a third of the commit rate. */
  notify(payload: string): Promise<void>;
  close(): Promise<void>;
}

/** The SQLite store's file name inside DATA_DIR. */
export const SQLITE_FILE = 'concierge.sqlite';

/** Opens the store and applies every pending migration before anything else touches it. */
export async function openStore(options: StoreOptions): Promise<Store> {
  const store = options.databaseUrl
    ? await openPostgres(options.databaseUrl, options.pgSchema)
    : openSqlite(options.dataDir);
  try {
    const migrated = () => migrate(store.db, options.databaseUrl ? options.pgSchema : undefined);
    await (store.dialect === 'postgres' ? underMigrationLock(store.db, migrated) : migrated());
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

/** How large the SQLite WAL may grow before the serving connection starts it over. */
export const WAL_CAP_BYTES = 16 * 1024 * 1024;

function openSqlite(dataDir: string): Store {
  const file = join(dataDir, SQLITE_FILE);
  keepPrivate(dataDir, file);
  const database = new SQLite(file);
  // WAL lets readers run beside the writer; NORMAL sync is durable across process crashes
  // (the WAL is fsynced at checkpoints), which is the failure this service must survive.
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  // The checkpointer thread copies the WAL into the database in the background, but under a
  // steady stream of commits it never finds every frame copied at once, and only then may the
  // WAL start over: it grew without bound (70 MB/s under the replies benchmark, each commit
  // slower as it grew). Past the cap, the commit that crosses it checkpoints here, copying only
  // what the thread has not, and the next transaction starts the WAL from its beginning.
  database.pragma(`wal_autocheckpoint = ${WAL_CAP_BYTES / Number(database.pragma('page_size', { simple: true }))}`);
  const checkpointer = new SqliteCheckpointer(file, (message) =>
    process.emitWarning(`SQLite checkpoint failed: ${message}`),
  );
  const { db, transaction } = sqliteConnection(withStatementCache(database));
  return {
    db,
    dialect: 'sqlite',
    direct: transaction,
    location: file,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: async () => {
      await checkpointer.stop();
      await db.destroy();
    },
  };
}

/**
 * The file holds every deployment's signing secret: readable by its owner only (0600, in a
 * 0700 directory), whatever the umask. SQLite gives its -wal and -shm files the database
 * file's mode; ones left from an older start are narrowed too.
 */
function keepPrivate(dataDir: string, file: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  closeSync(openSync(file, 'a', 0o600));
  for (const [path, mode] of [
    [dataDir, 0o700],
    [file, 0o600],
    [`${file}-wal`, 0o600],
    [`${file}-shm`, 0o600],
  ] as const) {
    try {
      chmodSync(path, mode);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT')
        process.emitWarning(`could not make ${path} private (${(err as Error).message})`);
    }
  }
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely prepares every query afresh; preparing was 6% of a list request. Queries are built
 * with placeholders, so the distinct SQL texts are few and their statements can be reused
 * (Kysely runs one query at a time on this connection, so a statement is never used twice at once).
 */
function withStatementCache(database: SQLite.Database) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => database.close(),
    prepare(text: string) {
      let statement = cache.get(text);
      if (!statement) {
        statement = database.prepare(text);
        if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
        cache.set(text, statement);
      }
      return statement;
    },
  };
}

/** A pool connection that cannot be had within this fails the request (503) instead of hanging it. */
const PG_CONNECT_TIMEOUT_MS = 3_000;
const LISTEN_RETRY_FIRST_MS = 100;
const LISTEN_RETRY_MAX_MS = 1_000;

async function openPostgres(url: string, schema: string | undefined): Promise<Store> {
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
    keepAlive: true,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // A connection the server ends (a restart, a failover, pg_terminate_backend) emits 'error' on
  // its client, idle or checked out; unheard, that event ends the process. The pool drops the
  // dead client, and the query that was using it, if any, fails on its own and is answered 503.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    client.on('error', () => {});
    prepareShapes(client);
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  if (schema) await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  const parsed = new URL(url);
  return {
    db,
    dialect: 'postgres',
    location: `postgres://${parsed.host}${parsed.pathname}${schema ? `#${schema}` : ''}`,
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: () => db.destroy(),
    openChannel: (listener) => openPgChannel(url, pool, `concierge_${schema ?? 'public'}`, listener),
  };
}

/**
 * A pooled client sends the compiled shapes' statements as named ones (see `preparedNameOf`):
 * PostgreSQL parses and plans each once on this connection, then only binds and runs it. Kysely
 * calls `query(sql, parameters)`; everything else passes as it came.
 */
function prepareShapes(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  client.query = ((...args: unknown[]) => {
    const [text, values, ...rest] = args;
    const name = typeof text === 'string' && Array.isArray(values) ? preparedNameOf(text) : undefined;
    return name ? query({ name, text, values }, ...rest) : query(...args);
  }) as typeof client.query;
}

/**
 * One LISTEN connection, reopened whenever it is lost, for as long as it takes: a node that
 * stopped listening would hear of other nodes' replies only from the periodic catch-up.
 */
async function openPgChannel(
  url: string,
  pool: pg.Pool,
  channel: string,
  listener: ChannelListener,
): Promise<StoreChannel> {
  let closed = false;
  let current: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let delay = LISTEN_RETRY_FIRST_MS;

  const listen = async (): Promise<void> => {
    const client = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: PG_CONNECT_TIMEOUT_MS,
      keepAlive: true,
    });
    let lost = false;
    const onLost = (err: Error) => {
      if (lost) return;
      lost = true;
      if (current === client) current = undefined;
      client.end().catch(() => {});
      if (closed) return;
      listener.lost(err);
      retry = setTimeout(() => void reopen(), delay);
      retry.unref();
      delay = Math.min(delay * 2, LISTEN_RETRY_MAX_MS);
    };
    client.on('error', onLost);
    client.on('end', () => onLost(new Error('LISTEN connection ended')));
    client.on('notification', (n) => n.channel === channel && n.payload !== undefined && listener.message(n.payload));
    try {
      await client.connect();
      await client.query(`listen ${channel}`);
    } catch (err) {
      onLost(err as Error);
      throw err;
    }
    if (closed) {
      await client.end().catch(() => {});
      return;
    }
    current = client;
    delay = LISTEN_RETRY_FIRST_MS;
  };
  const reopen = async (): Promise<void> => {
    try {
      await listen();
      if (!closed) listener.restored();
    } catch {
      // onLost has scheduled the next attempt
    }
  };

  try {
    await listen();
  } catch (err) {
    // At start a failure is the caller's to report, not ours to retry.
    closed = true;
    clearTimeout(retry);
    throw err;
  }
  return {
    notify: async (payload) => {
      await pool.query('select pg_notify($1, $2)', [channel, payload]);
    },
    close: async () => {
      closed = true;
      clearTimeout(retry);
      await current?.end().catch(() => {});
    },
  };
}

/** The PostgreSQL advisory lock (by `hashtext`) that one migration run, or a schema's removal, holds. */
export const MIGRATION_LOCK = 'concierge:migrations';

/**
 * Runs `work` holding MIGRATION_LOCK on a connection of its own. Kysely locks only the migrations
 * themselves: its check for its own tables before them reads every schema's tables, and fails if
 * one is dropped meanwhile, and two nodes starting at once on a new database would both create them.
 */
async function underMigrationLock<T>(db: Db, work: () => Promise<T>): Promise<T> {
  return db.connection().execute(async (held) => {
    await sql`select pg_advisory_lock(hashtext(${MIGRATION_LOCK}))`.execute(held);
    try {
      return await work();
    } finally {
      await sql`select pg_advisory_unlock(hashtext(${MIGRATION_LOCK}))`.execute(held);
    }
  });
}

/** Applies the migrations, every one or (`upTo`) those up to that name. */
export async function migrate(db: Db, schema: string | undefined, upTo?: string): Promise<void> {
  // Kysely looks for its own tables across every schema unless told which one is ours.
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = upTo ? await migrator.migrateTo(upTo) : await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(
      `migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
