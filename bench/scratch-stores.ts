import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { openStore, type Store } from '../server/src/store/db.js';

/**
 * Runs `measure` on a fresh SQLite store, then on a fresh PostgreSQL database when `DATABASE_URL`
 * names a server (created for the run and dropped after): each result labelled with its store.
 */
export async function onEachStore<T>(
  label: string,
  measure: (name: 'SQLite' | 'PostgreSQL', store: Store) => Promise<T>,
): Promise<T[]> {
  const results: T[] = [];
  const dir = mkdtempSync(join(tmpdir(), `concierge-bench-${label}-`));
  try {
    const store = await openStore({ dataDir: dir });
    try {
      results.push(await measure('SQLite', store));
    } finally {
      await store.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const url = process.env.DATABASE_URL;
  if (!url) return results;
  const name = `concierge_bench_${label}_${process.pid}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
    const scratch = new URL(url);
    scratch.pathname = `/${name}`;
    const store = await openStore({ dataDir: '', databaseUrl: scratch.toString() });
    try {
      await sql`set synchronous_commit = off`.execute(store.db);
      results.push(await measure('PostgreSQL', store));
    } finally {
      await store.close();
    }
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
  return results;
}
