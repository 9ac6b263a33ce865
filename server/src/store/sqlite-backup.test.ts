import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { copyFileSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import SQLite from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { client } from '../../test/harness.js';
import { processSandbox } from '../../test/process-sandbox.js';
import { bootstrapKey, ROOT, startServiceProcess, TSX } from '../../test/service-process.js';

const run = promisify(execFile);

/** `npm run admin -- backup|restore` against a real service process (README, Running several nodes). */
describe('SQLite backup and restore', () => {
  const sandbox = processSandbox('concierge-backup');
  const { running } = sandbox;

  const env = (dataDir: string) => ({
    PORT: '0',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '1000000',
  });
  /** Asynchronous, so the writers in this process go on while it runs. */
  const admin = async (dataDir: string, args: string[], extra: NodeJS.ProcessEnv = {}) => {
    try {
      const { stdout, stderr } = await run(process.execPath, [...TSX, 'server/src/admin.ts', ...args], {
        cwd: ROOT,
        env: { ...process.env, ...env(dataDir), ...extra },
      });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const failed = err as { code: number; stdout: string; stderr: string };
      return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
    }
  };
  const agentIdsIn = (file: string): string[] => {
    const db = new SQLite(file, { readonly: true });
    try {
      return (db.prepare('select id from agents').all() as { id: string }[]).map((r) => r.id).sort();
    } finally {
      db.close();
    }
  };

  it('copies a store while the service writes to it, and restores the copy only once the service has stopped', async () => {
    const dataDir = join(sandbox.root, 'data');
    const node = await startServiceProcess(env(dataDir));
    running.push(node);
    const key = await bootstrapKey(node);
    const api = client(node.url, key);

    // Writers keep committing for the whole backup.
    const created: { id: string; at: number }[] = [];
    let writing = true;
    const writer = async () => {
      while (writing) {
        const res = await api.post('/api/v1/agents', {
          name: `Desk ${created.length}`,
          description: 'Hotel concierge',
        });
        expect(res.status).toBe(202);
        created.push({ id: res.body.data.agent_id, at: Date.now() });
      }
    };
    const writers = [writer(), writer(), writer()];
    await new Promise((r) => setTimeout(r, 300));

    const backup = join(sandbox.root, 'copy.sqlite');
    // Someone else's file where an older version wrote its copy: never written into, never ours.
    writeFileSync(`${backup}.partial`, 'planted', { mode: 0o666 });
    const startedAt = Date.now();
    const backedUp = await admin(dataDir, ['backup', '--to', backup]);
    const endedAt = Date.now();
    writing = false;
    await Promise.all(writers);
    expect(backedUp.stderr).toBe('');
    expect(backedUp.stdout).toMatch(
      new RegExp(`^Backed up \\d+ bytes to ${backup} \\(its tag: ${backup}.hmac; keep both\\)\\n$`),
    );
    expect(backedUp.code).toBe(0);
    expect(statSync(backup).mode & 0o777).toBe(0o600);
    expect(statSync(`${backup}.hmac`).mode & 0o777).toBe(0o600);
    expect(readFileSync(`${backup}.hmac`, 'utf8')).toMatch(/^hmac-sha256:[0-9a-f]{64}\n$/);
    expect(readFileSync(`${backup}.partial`, 'utf8')).toBe('planted');
    expect(statSync(join(dataDir, 'backup.key')).mode & 0o777).toBe(0o600);
    // No working directory is left beside it.
    expect(readdirSync(sandbox.root).filter((f) => f.startsWith('.concierge-backup-'))).toEqual([]);

    // Every agent committed before the backup began is in the copy; none made after it ended is.
    const copied = agentIdsIn(backup);
    const before = created.filter((c) => c.at < startedAt).map((c) => c.id);
    const possible = new Set(created.filter((c) => c.at <= endedAt).map((c) => c.id));
    expect(before.length).toBeGreaterThan(0);
    expect(copied).toEqual(expect.arrayContaining(before));
    expect(copied.every((id) => possible.has(id))).toBe(true);
    expect(created.length).toBeGreaterThan(copied.length);

    const refused = await admin(dataDir, ['restore', '--from', backup]);
    expect([refused.code, refused.stderr]).toEqual([
      1,
      `A service (pid ${node.child.pid}) is running on ${dataDir}: stop it, then restore\n`,
    ]);

    node.child.kill('SIGTERM');
    expect(await node.exited).toBe(0);
    const notAStore = join(sandbox.root, 'not-a-store.sqlite');
    writeFileSync(notAStore, 'hello');
    const rejected = await admin(dataDir, ['restore', '--from', notAStore]);
    expect([rejected.code, rejected.stderr]).toEqual([
      1,
      `${notAStore} cannot be restored: ${notAStore}.hmac, its tag, is not beside it (a backup is both files)\n`,
    ]);

    // A trigger planted in the copy would copy every signing secret where another customer reads it.
    const planted = join(sandbox.root, 'planted.sqlite');
    copyFileSync(backup, planted);
    const db = new SQLite(planted);
    db.exec(
      `create trigger leak after insert on agents begin update agents set description = (select group_concat(signing_secret) from deployments) where id = new.id; end`,
    );
    db.close();
    copyFileSync(`${backup}.hmac`, `${planted}.hmac`);
    const tampered = await admin(dataDir, ['restore', '--from', planted]);
    expect([tampered.code, tampered.stderr]).toEqual([
      1,
      `${planted} cannot be restored: it does not match its tag (changed since it was made, or made with another backup key)\n`,
    ]);
    // Even tagged with the right key (a key that leaked, say), its schema is not what the migrations make.
    const backupKey = readFileSync(join(dataDir, 'backup.key'), 'utf8').trim();
    writeFileSync(
      `${planted}.hmac`,
      `hmac-sha256:${createHmac('sha256', backupKey).update(readFileSync(planted)).digest('hex')}\n`,
    );
    const foreign = await admin(dataDir, ['restore', '--from', planted]);
    expect([foreign.code, foreign.stderr]).toEqual([
      1,
      `${planted} cannot be restored: its schema is not what the migrations make (not made by the migrations: trigger leak)\n`,
    ]);
    // Another installation's key does not verify it; the right one given as BACKUP_KEY does, on a fresh data directory.
    const elsewhere = join(sandbox.root, 'elsewhere');
    const noKey = await admin(elsewhere, ['restore', '--from', backup]);
    expect([noKey.code, noKey.stderr]).toEqual([
      1,
      `No backup key: set BACKUP_KEY, or put the backup.key of the installation that made the backup in ${elsewhere}\n`,
    ]);
    const wrongKey = await admin(elsewhere, ['restore', '--from', backup], { BACKUP_KEY: 'f'.repeat(64) });
    expect(wrongKey.stderr).toBe(
      `${backup} cannot be restored: it does not match its tag (changed since it was made, or made with another backup key)\n`,
    );

    const restored = await admin(dataDir, ['restore', '--from', backup]);
    expect([restored.code, restored.stdout]).toEqual([0, `Restored ${backup}; start the service to use it\n`]);
    const again = await startServiceProcess(env(dataDir));
    running.push(again);
    const ids: string[] = [];
    for (let page = 1; ; page++) {
      const listed = await client(again.url, key).get(`/api/v1/agents?per_page=100&page=${page}`);
      ids.push(...listed.body.data.map((a: { id: string }) => a.id));
      if (page >= listed.body.meta.total_pages) break;
    }
    expect(ids.sort()).toEqual(copied);
    again.child.kill('SIGTERM');
    expect(await again.exited).toBe(0);
    // Three services started and stopped under tsx, and admin commands between: over 60 s on a loaded two-core machine.
  }, 120_000);

  it('says what to do instead with PostgreSQL, and what is missing', async () => {
    const dataDir = join(sandbox.root, 'usage');
    const pg = await admin(dataDir, ['backup', '--to', join(sandbox.root, 'x')], {
      DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none',
    });
    expect(pg.code).toBe(2);
    expect(pg.stderr).toMatch(
      /^backup copies the SQLite store; with DATABASE_URL set, use pg_dump and pg_restore \(README, Running several nodes\)\n/,
    );
    const noTarget = await admin(dataDir, ['backup']);
    expect([noTarget.code, noTarget.stderr.split('\n')[0]]).toEqual([2, '--to FILE is required']);
    const noStore = await admin(dataDir, ['backup', '--to', join(sandbox.root, 'y')]);
    expect([noStore.code, noStore.stderr]).toEqual([
      1,
      `There is no store at ${join(dataDir, 'concierge.sqlite')} to back up (DATA_DIR=${dataDir})\n`,
    ]);
  }, 30_000);
});
