import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { client } from '../test/harness.js';
import { ROOT, startServiceProcess as startProcess, TSX } from '../test/service-process.js';

describe('the service process', () => {
  let dataDir: string;
  const env = () => ({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', DATABASE_URL: '' });
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'concierge-proc-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('prints Listening and the bootstrap key once, serves it, and exits 0 on SIGTERM', async () => {
    const first = await startProcess(env());
    // Give the key line a moment: it is written right after Listening.
    await new Promise((r) => setTimeout(r, 100));
    const key = /^API key: (vak_\S+)$/m.exec(first.stdout())?.[1];
    expect(key).toBeDefined();
    expect((await client(first.url, key).get('/api/v1/agents')).status).toBe(200);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const second = await startProcess(env());
    await new Promise((r) => setTimeout(r, 100));
    expect(second.stdout()).not.toContain('API key:');
    expect((await client(second.url, key).get('/api/v1/settings/api-key')).status).toBe(200);

    const admin = spawnSync(process.execPath, [...TSX, 'server/src/admin.ts', 'create-customer', '--name', 'Second hotel'], { cwd: ROOT, env: { ...process.env, ...env() }, encoding: 'utf8' });
    expect(admin.status).toBe(0);
    const adminKey = /^API key: (vak_\S+)$/m.exec(admin.stdout)?.[1];
    expect(adminKey).toBeDefined();
    expect((await client(second.url, adminKey).get('/api/v1/agents')).body.meta.total_count).toBe(0);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });

  it('refuses bad admin usage and bad configuration with a clear message', () => {
    const usage = spawnSync(process.execPath, [...TSX, 'server/src/admin.ts', 'create-customer'], { cwd: ROOT, env: { ...process.env, ...env() }, encoding: 'utf8' });
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain('--name is required');
    const config = spawnSync(process.execPath, [...TSX, 'server/src/main.ts'], { cwd: ROOT, env: { ...process.env, ...env(), PORT: 'eighty' }, encoding: 'utf8' });
    expect(config.status).toBe(1);
    expect(config.stderr).toContain('Invalid configuration');
    expect(config.stderr).toContain('PORT');
  });
});
