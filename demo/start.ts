import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { startDemo } from './customer-server.js';
import type { Provisioned } from './provision.js';

/**
 * `npm start`: the service (its own process, exactly as `npm run service` runs it) and the demo
 * hotel beside it. The demo is a customer of its own, created once with the admin command and
 * remembered with its deployment in `$DATA_DIR/demo.json`.
 */
const ROOT = join(import.meta.dirname, '..');
const TSX = ['--import', 'tsx'];
const dataDir = process.env.DATA_DIR ?? './data';
const statePath = join(dataDir, 'demo.json');

// The demo hotel's hooks are on loopback: the service's egress guard lets that host through, and no other private one.
const allowed = [process.env.HOOK_ALLOWED_HOSTS, '127.0.0.1'].filter(Boolean).join(',');
const service = spawn(process.execPath, [...TSX, 'server/src/main.ts'], { cwd: ROOT, env: { ...process.env, HOOK_ALLOWED_HOSTS: allowed }, stdio: ['ignore', 'pipe', 'inherit'] });
let closeDemo: (() => Promise<void>) | undefined;
service.on('exit', (code) => void (closeDemo?.() ?? Promise.resolve()).then(() => process.exit(code ?? 1)));
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => service.kill('SIGTERM'));

const serviceUrl = await new Promise<string>((resolve) => {
  let seen = '';
  service.stdout!.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk);
    seen += chunk;
    const match = /^Listening on (http:\/\/\S+)$/m.exec(seen);
    if (match) resolve(match[1]!);
  });
});

/** The demo customer's key: the remembered one while the service still knows it, else a new customer. */
async function demoKey(): Promise<string> {
  if (existsSync(statePath)) {
    const { apiKey } = JSON.parse(readFileSync(statePath, 'utf8')) as Provisioned;
    // A store wiped while demo.json stayed would refuse it: then the demo starts over.
    const probe = await fetch(`${serviceUrl}/api/v1/agents?per_page=1`, { headers: { authorization: `Bearer ${apiKey}` } });
    if (probe.status !== 401) return apiKey;
    rmSync(statePath);
  }
  const made = spawnSync(process.execPath, [...TSX, 'server/src/admin.ts', 'create-customer', '--name', 'Harbor Hotel (demo)'], { cwd: ROOT, encoding: 'utf8' });
  const key = /^API key: (vak_\S+)$/m.exec(made.stdout)?.[1];
  if (!key) throw new Error(`demo: could not create its customer: ${made.stderr}`);
  return key;
}

try {
  mkdirSync(dataDir, { recursive: true });
  const demo = await startDemo({
    serviceUrl,
    apiKey: await demoKey(),
    port: Number(process.env.DEMO_PORT ?? 8788),
    host: process.env.HOST ?? '127.0.0.1',
    statePath,
  });
  closeDemo = demo.close;
  process.stdout.write(`Demo at ${demo.url}\n`);
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  service.kill('SIGTERM');
}
