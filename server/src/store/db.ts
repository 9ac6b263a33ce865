import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { Database, Db } from './database.js';
import { migrations } from './migrations/index.js';
import { SqliteCheckpointer } from './sqlite-checkpointer.js';

export interface StoreOptions {
  /** `postgres://...`: PostgreSQL; otherwise SQLite in `dataDir`. */
  databaseUrl?: string | undefined;
  dataDir: string;
  /** PostgreSQL schema to work in (tests give each file its own); created when missing. */
  pgSchema?: string;
}

export interface Store {
  readonly db: Db;
  readonly dialect: 'sqlite' | 'postgres';
  /** Where the data lives, without credentials: safe to log. */
  readonly location: string;
  ping(): Promise<void>;
  close(): Promise<void>;
  /** PostgreSQL only: a channel between the nodes sharing this store (one LISTEN connection). */
  openChannel?(onMessage: (payload: string) => void, onError: (err: Error) => void): Promise<StoreChannel>;
}

export interface StoreChannel {
  /** Sent outside any transaction: NOTIFY inside one measured at a third of the commit rate. */
  notify(payload: string): Promise<void>;
  close(): Promise<void>;
}

const SQLITE_FILE = 'concierge.sqlite';

/** Opens the store and applies every pending migration before anything else touches it. */
export async function openStore(options: StoreOptions): Promise<Store> {
  const store = options.databaseUrl ? await openPostgres(options.databaseUrl, options.pgSchema) : openSqlite(options.dataDir);
  try {
    await migrate(store.db, options.databaseUrl ? options.pgSchema : undefined);
  } catch (err) {
    await store.close();
    throw err;
  }
  return store;
}

function openSqlite(dataDir: string): Store {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, SQLITE_FILE);
  const database = new SQLite(file);
  // WAL lets readers run beside the writer; NORMAL sync is durable across process crashes
  // (the WAL is fsynced at checkpoints), which is the failure this service must survive.
  database.pragma('journal_mode = WAL');
  database.pragma('synchronous = NORMAL');
  database.pragma('foreign_keys = ON');
  database.pragma('busy_timeout = 5000');
  database.pragma('wal_autocheckpoint = 0');
  const checkpointer = new SqliteCheckpointer(file, (message) => process.emitWarning(`SQLite checkpoint failed: ${message}`));
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(database) }) });
  return {
    db,
    dialect: 'sqlite',
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

async function openPostgres(url: string, schema: string | undefined): Promise<Store> {
  if (schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) throw new Error(`invalid schema name ${schema}`);
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
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
    openChannel: (onMessage, onError) => openPgChannel(url, pool, `concierge_${schema ?? 'public'}`, onMessage, onError),
  };
}

async function openPgChannel(url: string, pool: pg.Pool, channel: string, onMessage: (payload: string) => void, onError: (err: Error) => void): Promise<StoreChannel> {
  let closed = false;
  let client: pg.Client | undefined;
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url });
    next.on('notification', (n) => n.channel === channel && n.payload !== undefined && onMessage(n.payload));
    next.on('error', (err) => {
      onError(err);
      // Reconnect; the bus's periodic catch-up covers whatever was sent meanwhile.
      if (!closed) setTimeout(() => void connect().catch(onError), 1_000).unref();
    });
    await next.connect();
    await next.query(`listen ${channel}`);
    client = next;
  };
  await connect();
  return {
    notify: async (payload) => {
      await pool.query('select pg_notify($1, $2)', [channel, payload]);
    },
    close: async () => {
      closed = true;
      await client?.end().catch(() => {});
    },
  };
}

async function migrate(db: Db, schema: string | undefined): Promise<void> {
  // Kysely looks for its own tables across every schema unless told which one is ours.
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    ...(schema ? { migrationTableSchema: schema } : {}),
  });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`migration ${failed?.migrationName ?? ''} failed: ${error instanceof Error ? error.message : String(error)}`);
  }
}
