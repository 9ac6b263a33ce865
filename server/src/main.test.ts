import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, client } from '../test/harness.js';
import { type NodeProcess, ROOT, startNodeProcess, startServiceProcess, TSX } from '../test/service-process.js';

describe('the service process', () => {
  let dataDir: string;
  const env = () => ({ PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', DATABASE_URL: '' });
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'concierge-proc-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  // A failed assertion must not leave a service running (it would hold its port and store).
  const running: NodeProcess[] = [];
  const startProcess = async (e: NodeJS.ProcessEnv) => {
    const started = await startServiceProcess(e);
    running.push(started);
    return started;
  };
  afterEach(() => {
    for (const p of running.splice(0)) if (p.child.exitCode === null) p.child.kill('SIGKILL');
  });

  // Two service processes and an admin command, each compiled by tsx as it starts: slow beside other suites.
  it("prints Listening, the bootstrap key and the owner's console link once, serves them, and exits 0 on SIGTERM", async () => {
    const first = await startProcess(env());
    // Give the key lines a moment: they are written right after Listening.
    await new Promise((r) => setTimeout(r, 200));
    const key = /^API key: (vak_\S+)$/m.exec(first.stdout())?.[1];
    expect(key).toBeDefined();
    expect((await client(first.url, key).get('/api/v1/agents')).status).toBe(200);
    const link = /^Console sign-in: (\S+)$/m.exec(first.stdout())?.[1];
    expect(link).toMatch(new RegExp(`^${first.url}/console/#/welcome/[A-Za-z0-9_-]{43}$`));
    const welcome = await call(first.url, 'POST', '/console/welcome', {
      body: { token: link!.split('/').pop(), password: 'a long enough password' },
    });
    expect(welcome.status).toBe(204);
    const signIn = await call(first.url, 'POST', '/console/session', {
      body: { email: 'owner@localhost', password: 'a long enough password' },
    });
    expect(signIn.status).toBe(204);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);

    const second = await startProcess(env());
    await new Promise((r) => setTimeout(r, 100));
    expect(second.stdout()).not.toContain('API key:');
    expect(second.stdout()).not.toContain('Console sign-in:');
    expect((await client(second.url, key).get('/api/v1/settings/api-key')).status).toBe(200);

    const admin = spawnSync(
      process.execPath,
      [...TSX, 'server/src/admin.ts', 'create-customer', '--name', 'Second hotel'],
      { cwd: ROOT, env: { ...process.env, ...env() }, encoding: 'utf8' },
    );
    expect(admin.status).toBe(0);
    const adminKey = /^API key: (vak_\S+)$/m.exec(admin.stdout)?.[1];
    expect(adminKey).toBeDefined();
    expect((await client(second.url, adminKey).get('/api/v1/agents')).body.meta.total_count).toBe(0);
    const customerId = /^Customer: (\S+)$/m.exec(admin.stdout)![1]!;
    const user = spawnSync(
      process.execPath,
      [...TSX, 'server/src/admin.ts', 'create-user', '--customer', customerId, '--email', 'desk@second.example'],
      { cwd: ROOT, env: { ...process.env, ...env() }, encoding: 'utf8' },
    );
    expect(user.status).toBe(0);
    expect(user.stdout).toMatch(/^Console sign-in: http:\/\/127\.0\.0\.1:0\/console\/#\/welcome\/[A-Za-z0-9_-]{43}\n$/);
    const foreign = spawnSync(
      process.execPath,
      [...TSX, 'server/src/admin.ts', 'create-user', '--customer', customerId, '--email', 'owner@localhost'],
      { cwd: ROOT, env: { ...process.env, ...env() }, encoding: 'utf8' },
    );
    // An address may be in several teams: the first customer's owner joins the second's too.
    expect(foreign.status).toBe(0);
    const ambiguous = spawnSync(
      process.execPath,
      [...TSX, 'server/src/admin.ts', 'create-user', '--email', 'owner@localhost'],
      { cwd: ROOT, env: { ...process.env, ...env() }, encoding: 'utf8' },
    );
    expect([ambiguous.status, ambiguous.stderr]).toEqual([
      2,
      expect.stringContaining('owner@localhost is in 2 teams: name one with --customer'),
    ]);
    // A forgotten password, without the customer's id: a fresh link for the user the address names.
    const again = spawnSync(
      process.execPath,
      [...TSX, 'server/src/admin.ts', 'create-user', '--email', 'DESK@second.example'],
      { cwd: ROOT, env: { ...process.env, ...env() }, encoding: 'utf8' },
    );
    expect([again.status, again.stdout]).toEqual([
      0,
      expect.stringMatching(/^Console sign-in: http:\/\/127\.0\.0\.1:0\/console\/#\/welcome\/[A-Za-z0-9_-]{43}\n$/),
    ]);
    expect(again.stdout).not.toBe(user.stdout);
    const unknown = spawnSync(
      process.execPath,
      [...TSX, 'server/src/admin.ts', 'create-user', '--email', 'nobody@second.example'],
      { cwd: ROOT, env: { ...process.env, ...env() }, encoding: 'utf8' },
    );
    expect([unknown.status, unknown.stderr]).toEqual([
      2,
      expect.stringContaining(
        'nobody@second.example has no console account yet: name its customer with --customer CUSTOMER_ID',
      ),
    ]);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 90_000);

  it('refuses bad admin usage and bad configuration with a clear message', () => {
    const usage = spawnSync(process.execPath, [...TSX, 'server/src/admin.ts', 'create-customer'], {
      cwd: ROOT,
      env: { ...process.env, ...env() },
      encoding: 'utf8',
    });
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain('--name is required');
    const badEmail = spawnSync(
      process.execPath,
      [
        ...TSX,
        'server/src/admin.ts',
        'create-user',
        '--customer',
        '00000000-0000-4000-8000-000000000000',
        '--email',
        'not-an-address',
      ],
      { cwd: ROOT, env: { ...process.env, ...env() }, encoding: 'utf8' },
    );
    expect(badEmail.status).toBe(2);
    expect(badEmail.stderr).toContain('--email must be an email address');
    const config = spawnSync(process.execPath, [...TSX, 'server/src/main.ts'], {
      cwd: ROOT,
      env: { ...process.env, ...env(), PORT: 'eighty' },
      encoding: 'utf8',
    });
    expect(config.status).toBe(1);
    expect(config.stderr).toContain('Invalid configuration');
    expect(config.stderr).toContain('PORT');
  }, 60_000);
});

describe('npm run build', () => {
  it('gives a dist/ whose service serves the widget bundle and the console, with nothing else built first', async () => {
    // A copy of the tracked sources with the installed packages beside them, so the build writes
    // nothing the other suites read while they run.
    const copy = mkdtempSync(join(tmpdir(), 'concierge-build-'));
    try {
      const files = spawnSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
        .stdout.split('\0')
        .filter(Boolean);
      for (const file of files) cpSync(join(ROOT, file), join(copy, file), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'), 'dir');
      const built = spawnSync('npm', ['run', 'build'], { cwd: copy, encoding: 'utf8' });
      expect(built.status, built.stderr).toBe(0);
      const service = await startNodeProcess(
        join(copy, 'dist/server/src/main.js'),
        {
          PORT: '0',
          HOST: '127.0.0.1',
          DATA_DIR: join(copy, 'data'),
          LOG_LEVEL: 'warn',
          DATABASE_URL: '',
          DRAIN_S: '0',
        },
        /^Listening on (http:\/\/\S+)$/m,
        [],
      );
      try {
        const widget = await fetch(`${service.url}/widget/concierge.js`);
        expect([widget.status, widget.headers.get('content-type')]).toEqual([200, 'text/javascript; charset=utf-8']);
        expect(await widget.text()).toContain('Concierge');
        const console = await fetch(`${service.url}/console/`);
        expect([console.status, console.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
      } finally {
        service.child.kill('SIGTERM');
        await service.exited;
      }
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  }, 180_000);
});
