import { chmodSync, copyFileSync, existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { SQLITE_FILE } from './db.js';

/** Beside the store: the pid of the service that holds it, so a restore can refuse while it runs. */
const HOLDER_FILE = 'service.pid';

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
 * A consistent copy of the store while the service runs and writes: SQLite's online backup,
 * in one step. In steps, every commit by the service between two of them starts the copy over,
 * so under steady traffic it would never end; one step reads a single snapshot (WAL readers
 * never block the writer). Written beside `to` first and renamed, so `to` is never half a copy.
 */
export async function backupSqlite(dataDir: string, to: string): Promise<{ bytes: number }> {
  const file = join(dataDir, SQLITE_FILE);
  if (!existsSync(file)) throw new BackupError(`There is no store at ${file} to back up (DATA_DIR=${dataDir})`);
  const partial = `${to}.partial`;
  const source = new SQLite(file, { fileMustExist: true });
  try {
    source.pragma('busy_timeout = 5000');
    await source.backup(partial, { progress: () => 2 ** 30 });
  } catch (err) {
    rmSync(partial, { force: true });
    throw new BackupError(`The backup failed: ${(err as Error).message}`);
  } finally {
    source.close();
  }
  // It holds every deployment's signing secret, like the store itself.
  chmodSync(partial, 0o600);
  const problem = storeProblem(partial);
  if (problem) {
    rmSync(partial, { force: true });
    throw new BackupError(`The copy does not check out (${problem}); nothing was written to ${to}`);
  }
  renameSync(partial, to);
  return { bytes: statSync(to).size };
}

/**
 * Puts a backup in place of the store. Refused while a service holds it: the service would go on
 * writing into a file replaced under it. The copy is checked before anything is replaced.
 */
export function restoreSqlite(dataDir: string, from: string): void {
  if (!existsSync(from)) throw new BackupError(`${from} does not exist`);
  const problem = storeProblem(from);
  if (problem) throw new BackupError(`${from} cannot be restored: ${problem}`);
  const holder = storeHolder(dataDir);
  if (holder !== undefined) throw new BackupError(`A service (pid ${holder}) is running on ${dataDir}: stop it, then restore`);
  const file = join(dataDir, SQLITE_FILE);
  const partial = `${file}.partial`;
  copyFileSync(from, partial);
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
