import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, expect, it } from 'vitest';
import { openStore } from './db.js';

const root = mkdtempSync(join(tmpdir(), 'concierge-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const mode = (path: string) => statSync(path).mode & 0o777;

it('creates the SQLite file and its directory readable by their owner only, whatever the umask', async () => {
  const previous = process.umask(0o022);
  try {
    const dataDir = join(root, 'fresh', 'data');
    const store = await openStore({ dataDir });
    await sql`select 1`.execute(store.db);
    expect([
      mode(dataDir),
      mode(join(dataDir, 'concierge.sqlite')),
      mode(join(dataDir, 'concierge.sqlite-wal')),
    ]).toEqual([0o700, 0o600, 0o600]);
    await store.close();
  } finally {
    process.umask(previous);
  }
});

it('narrows a directory and files left readable by an older start', async () => {
  const dataDir = join(root, 'old');
  mkdirSync(dataDir, { mode: 0o755 });
  chmodSync(dataDir, 0o755);
  for (const name of ['concierge.sqlite', 'concierge.sqlite-wal']) {
    writeFileSync(join(dataDir, name), '');
    chmodSync(join(dataDir, name), 0o644);
  }
  const store = await openStore({ dataDir });
  expect([mode(dataDir), mode(join(dataDir, 'concierge.sqlite')), mode(join(dataDir, 'concierge.sqlite-wal'))]).toEqual(
    [0o700, 0o600, 0o600],
  );
  await store.close();
});
