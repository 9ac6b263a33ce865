import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, expect, it } from 'vitest';
import { openStore, WAL_CAP_BYTES } from './db.js';

const root = mkdtempSync(join(tmpdir(), 'concierge-wal-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it('keeps the WAL bounded under a steady stream of commits, however busy (it grew by 70 MB/s under the replies benchmark)', async () => {
  const dataDir = join(root, 'busy');
  const store = await openStore({ dataDir });
  const wal = join(dataDir, 'concierge.sqlite-wal');
  const walSize = () => (existsSync(wal) ? statSync(wal).size : 0);
  try {
    await sql`create table churn (id integer primary key, body blob not null)`.execute(store.db);
    const body = Buffer.alloc(6_000, 7); // two overflow pages and the row's: three pages a commit
    let largest = 0;
    let commits = 0;
    // Three times the cap over more than three seconds (the background checkpoint runs every
    // second), one small transaction at a time as a service answering requests does: the
    // checkpoint never finds a moment when every frame is copied, so only the writer can start
    // the WAL over.
    const started = Date.now();
    while (commits * 3 * 4096 < 3 * WAL_CAP_BYTES || Date.now() - started < 3_500) {
      await store.db.transaction().execute((trx) => sql`insert into churn (body) values (${body})`.execute(trx));
      commits++;
      if (commits % 100 === 0) largest = Math.max(largest, walSize());
      await new Promise((resolve) => setTimeout(resolve, commits % 4 ? 0 : 1));
    }
    largest = Math.max(largest, walSize());
    expect(largest).toBeGreaterThan(WAL_CAP_BYTES / 4);
    expect(largest).toBeLessThan(WAL_CAP_BYTES * 1.5);
  } finally {
    await store.close();
  }
}, 60_000);
