import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  chmodSync,
  constants,
  copyFileSync,
  createReadStream,
  existsSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import type { Database } from '../database.js';
import { migrate, SQLITE_FILE } from './db.js';
import { migrations } from './migrations/index.js';

/** Beside the store: the pid of the service that holds it, so a restore can refuse while it runs. */
const HOLDER_FILE = 'service.pid';
/** Beside the store: the key backups are tagged with, made at the first backup (BACKUP_KEY replaces it). */
export const BACKUP_KEY_FILE = 'backup.key';
/** Beside each backup `FILE`: `FILE.hmac`, its authentication tag. */
export const TAG_SUFFIX = '.hmac';

/** Marks `dataDir` as held by this process; the returned function lets it go (only if still ours). */
export function holdStore(dataDir: string): () => void {
  const file = join(dataDir, HOLDER_FILE);
  writeFileSync(file, `${process.pid}\n`, { mode: 0o600 });
  return () => {
    try {
      if (readFileSync(file, 'utf8').trim() === String(process.pid)) rmSync(file);
    } catch {
      // Already gone: nothing to let go.
    }
  };
}

/** The pid of a running service holding `dataDir`; a file left by one that was killed does not count. */
export function storeHolder(dataDir: string): number | undefined {
  let pid: number;
  try {
    pid = Number(readFileSync(join(dataDir, HOLDER_FILE), 'utf8').trim());
  } catch {
    return undefined;
  }
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    // EPERM: it exists, under another user.
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : undefined;
  }
}

export class BackupError extends Error {}

/**
 * The key backups are tagged with: `BACKUP_KEY` when set, else `backup.key` in DATA_DIR, made
 * (0600, 32 random bytes) by the first backup. A restore on another machine needs the same one.
 */
function backupKey(dataDir: string, given: string | undefined, make: boolean): Buffer {
  if (given) return Buffer.from(given, 'utf8');
  const file = join(dataDir, BACKUP_KEY_FILE);
  if (!existsSync(file)) {
    if (!make)
      throw new BackupError(
        `No backup key: set BACKUP_KEY, or put the ${BACKUP_KEY_FILE} of the installation that made the backup in ${dataDir}`,
      );
    writeFileSync(file, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  }
  return Buffer.from(readFileSync(file, 'utf8').trim(), 'utf8');
}

/** HMAC-SHA256 of a file's bytes, read in pieces. */
async function tagOf(file: string, key: Buffer): Promise<Buffer> {
  const hmac = createHmac('sha256', key);
  for await (const chunk of createReadStream(file)) hmac.update(chunk as Buffer);
  return hmac.digest();
}

/**
 * A consistent copy of the store while the service runs and writes: SQLite's online backup,
 * in one step. In steps, every commit by the service between two of them starts the copy over,
 * so under steady traffic it would never end; one step reads a single snapshot (WAL readers
 * never block the writer). The copy is made in a fresh directory only this user can enter (so
 * nobody reads it while it is written, or hands us a file of theirs to write into), checked,
 * tagged (`FILE.hmac`) and renamed into place, so `to` is never half a copy.
 */
export async function backupSqlite(
  dataDir: string,
  to: string,
  options: { key?: string | undefined } = {},
): Promise<{ bytes: number }> {
  const file = join(dataDir, SQLITE_FILE);
  if (!existsSync(file)) throw new BackupError(`There is no store at ${file} to back up (DATA_DIR=${dataDir})`);
  const key = backupKey(dataDir, options.key, true);
  const workDir = mkdtempSync(join(dirname(to), '.concierge-backup-'));
  try {
    const partial = join(workDir, 'copy.sqlite');
    const source = new SQLite(file, { fileMustExist: true });
    try {
      source.pragma('busy_timeout = 5000');
      await source.backup(partial, { progress: () => 2 ** 30 });
    } catch (err) {
      throw new BackupError(`The backup failed: ${(err as Error).message}`);
    } finally {
      source.close();
    }
    // It holds every deployment's signing secret, like the store itself.
    chmodSync(partial, 0o600);
    const problem = storeProblem(partial);
    if (problem) throw new BackupError(`The copy does not check out (${problem}); nothing was written to ${to}`);
    const tag = join(workDir, 'copy.hmac');
    writeFileSync(tag, `hmac-sha256:${(await tagOf(partial, key)).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    renameSync(partial, to);
    renameSync(tag, `${to}${TAG_SUFFIX}`);
    return { bytes: statSync(to).size };
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

/**
 * Puts a backup in place of the store. Refused while a service holds it: the service would go on
 * writing into a file replaced under it. Before anything is replaced the copy must carry the tag
 * this installation's key gives it (nobody without the key changed a byte), check out as SQLite,
 * and hold exactly the schema the migrations it records make: a trigger, view or index added
 * after the fact would run inside the service with every customer's data.
 */
export async function restoreSqlite(
  dataDir: string,
  from: string,
  options: { key?: string | undefined } = {},
): Promise<void> {
  if (!existsSync(from)) throw new BackupError(`${from} does not exist`);
  const tagFile = `${from}${TAG_SUFFIX}`;
  if (!existsSync(tagFile))
    throw new BackupError(`${from} cannot be restored: ${tagFile}, its tag, is not beside it (a backup is both files)`);
  const expected = await tagOf(from, backupKey(dataDir, options.key, false));
  const given = Buffer.from(/^hmac-sha256:([0-9a-f]{64})\s*$/.exec(readFileSync(tagFile, 'utf8'))?.[1] ?? '', 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw new BackupError(
      `${from} cannot be restored: it does not match its tag (changed since it was made, or made with another backup key)`,
    );
  }
  const problem = storeProblem(from) ?? (await schemaProblem(from));
  if (problem) throw new BackupError(`${from} cannot be restored: ${problem}`);
  const holder = storeHolder(dataDir);
  if (holder !== undefined)
    throw new BackupError(`A service (pid ${holder}) is running on ${dataDir}: stop it, then restore`);
  const file = join(dataDir, SQLITE_FILE);
  const partial = `${file}.partial`;
  rmSync(partial, { force: true });
  copyFileSync(from, partial, constants.COPYFILE_EXCL);
  chmodSync(partial, 0o600);
  // The old store's write-ahead log belongs to the old file: left in place, SQLite would replay it into the restored one.
  for (const leftover of [`${file}-wal`, `${file}-shm`]) rmSync(leftover, { force: true });
  renameSync(partial, file);
}

/** Why `file` is not a Concierge store, or undefined when it is one. */
function storeProblem(file: string): string | undefined {
  let db: SQLite.Database | undefined;
  try {
    db = new SQLite(file, { readonly: true, fileMustExist: true });
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') return `SQLite reports it damaged (${String(check)})`;
    const migrated = db.prepare(`select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'`).get();
    return migrated ? undefined : 'it is not a Concierge store (no migrations recorded)';
  } catch (err) {
    return `it is not a SQLite database (${(err as Error).message})`;
  } finally {
    db?.close();
  }
}

interface SchemaObject {
  type: string;
  name: string;
  sql: string | null;
}

function schemaOf(db: SQLite.Database): SchemaObject[] {
  return db
    .prepare(`select type, name, sql from sqlite_master where name not like 'sqlite_%' order by type, name`)
    .all() as SchemaObject[];
}

/** Whether `file` holds exactly what this release's migrations make, up to the last one it records. */
async function schemaProblem(file: string): Promise<string | undefined> {
  const copy = new SQLite(file, { readonly: true, fileMustExist: true });
  let applied: string[];
  let actual: SchemaObject[];
  try {
    applied = (copy.prepare('select name from kysely_migration order by name').all() as { name: string }[]).map(
      (r) => r.name,
    );
    actual = schemaOf(copy);
  } finally {
    copy.close();
  }
  const known = Object.keys(migrations).sort();
  if (!applied.length || applied.some((name, i) => known[i] !== name))
    return "its migrations are not this release's (restore it with the release that made it)";
  const scratch = mkdtempSync(join(tmpdir(), 'concierge-schema-'));
  try {
    const database = new SQLite(join(scratch, 'expected.sqlite'));
    const db = new Kysely<Database>({ dialect: new SqliteDialect({ database }) });
    try {
      await migrate(db, undefined, applied.at(-1));
      const expected = new Map(schemaOf(database).map((o) => [`${o.type} ${o.name}`, o.sql]));
      const found = new Map(actual.map((o) => [`${o.type} ${o.name}`, o.sql]));
      const extra = [...found.keys()].filter((k) => !expected.has(k));
      const missing = [...expected.keys()].filter((k) => !found.has(k));
      const changed = [...expected.keys()].filter((k) => found.has(k) && found.get(k) !== expected.get(k));
      if (!extra.length && !missing.length && !changed.length) return undefined;
      const said = [
        extra.length ? `not made by the migrations: ${extra.join(', ')}` : '',
        missing.length ? `missing: ${missing.join(', ')}` : '',
        changed.length ? `changed: ${changed.join(', ')}` : '',
      ].filter(Boolean);
      return `its schema is not what the migrations make (${said.join('; ')})`;
    } finally {
      await db.destroy();
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
