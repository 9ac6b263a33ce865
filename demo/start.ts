import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import {
  FIRST_SERVER_HOSTS,
  hearingLine,
  LOCAL_MODEL_PORTS,
  nextSteps,
  voiceLine,
} from '../server/src/start-notice.js';
import { startDemo } from './customer-server.js';
import type { Provisioned } from './provision.js';

/**
 * `npm start`: the service (its own process, exactly as `npm run service` runs it) and the demo
 * hotel beside it. The demo is a customer of its own, created once with the admin command and
 * remembered with its deployment in `$DATA_DIR/demo.json`.
 *
 * SIGTERM or SIGINT to this process, to npm above it or to the service stops both, and the
 * whole tree exits 0: npm execs this process directly (no shell in between to be left behind).
 */
const ROOT = join(import.meta.dirname, '..');
const TSX = ['--import', 'tsx'];
const dataDir = process.env.DATA_DIR ?? './data';
const statePath = join(dataDir, 'demo.json');
/** Debian's `pocketsphinx-en-us`: PocketSphinx hears nothing without it. */
const POCKETSPHINX_ENGLISH = '/usr/share/pocketsphinx/model/en-us';

// The demo hotel's hooks are on loopback (and its guest guide, fetched for the agent's knowledge
// base at the address visitors use), and so are the server of README, "Your first concierge" (port
// 3000) and a language model run on this machine (Ollama's, llama.cpp's and vLLM's ports): the
// service's egress guard lets those ports through, and nothing else on this machine.
// DEMO_PORT=0 is settled here, since the guard must know the port first.
const demoPort = await freePort(Number(process.env.DEMO_PORT ?? 8788));
const loopback = (port: number) => [`127.0.0.1:${port}`, `localhost:${port}`];
// One customer's machine: the ports are opened for every customer and use (`*@`).
const allowed = [
  process.env.HOOK_ALLOWED_HOSTS,
  ...[...loopback(demoPort), ...FIRST_SERVER_HOSTS, ...LOCAL_MODEL_PORTS.flatMap(loopback)].map((host) => `*@${host}`),
]
  .filter(Boolean)
  .join(',');
// The hotel speaks in the service's own voice where espeak-ng is installed, and hears with
// PocketSphinx where it is (so Firefox, which recognises nothing itself, has a microphone), unless
// the operator chose others.
const voice =
  process.env.TEXT_TO_SPEECH || process.env.TEXT_TO_SPEECH_URL || !installed('espeak-ng')
    ? {}
    : { TEXT_TO_SPEECH: 'espeak-ng' };
const hearing =
  process.env.SPEECH_TO_TEXT ||
  process.env.SPEECH_TO_TEXT_URL ||
  !installed('pocketsphinx_continuous') ||
  !existsSync(POCKETSPHINX_ENGLISH)
    ? {}
    : { SPEECH_TO_TEXT: 'pocketsphinx' };
const serviceEnv = { DRAIN_S: '0', ...voice, ...hearing, ...process.env, HOOK_ALLOWED_HOSTS: allowed };
const service = spawn(process.execPath, [...TSX, 'server/src/main.ts', '--no-next-steps'], {
  cwd: ROOT,
  // One node on a laptop: nothing balances traffic away from it, so a stop need not wait.
  env: serviceEnv,
  stdio: ['ignore', 'pipe', 'inherit'],
});
let closeDemo: (() => Promise<void>) | undefined;
let stopping = false;
let failed = false;
service.on('exit', (code) => {
  // Stopped by our signal before it could set up its own handlers: still a clean stop.
  const status = failed ? 1 : (code ?? (stopping ? 0 : 1));
  void (closeDemo?.() ?? Promise.resolve()).then(() => process.exit(status));
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    stopping = true;
    if (service.exitCode === null) service.kill('SIGTERM');
  });
}

/**
 * The service's output, held until the demo is up so that the start block reads in one piece:
 * its plain lines (URLs, key, link) first, then the demo's, then the log lines held meanwhile.
 */
let held: string[] | undefined = [];
let partial = '';
const serviceUrl = await new Promise<string>((resolve) => {
  service.stdout!.on('data', (chunk: Buffer) => {
    if (!held) return void process.stdout.write(chunk);
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      held.push(line);
      const match = /^Listening on (http:\/\/\S+)$/.exec(line);
      if (match) resolve(match[1]!);
    }
  });
});

function installed(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
}

/** `port` itself, or for 0 a port that is free now (the demo binds it a moment later). */
async function freePort(port: number): Promise<number> {
  if (port !== 0) return port;
  const probe = createServer();
  await new Promise<void>((resolve, reject) =>
    probe.once('error', reject).listen(0, process.env.HOST ?? '127.0.0.1', resolve),
  );
  const { port: chosen } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return chosen;
}

/** Prints what was held (plain lines, then `extra`, then log lines) and lets output through from then on. */
function release(extra: string): void {
  const lines = held ?? [];
  held = undefined;
  const isLog = (line: string) => line.startsWith('{');
  const plain = lines.filter((line) => !isLog(line));
  process.stdout.write(
    `${plain.join('\n')}\n${extra}${lines
      .filter(isLog)
      .map((line) => `${line}\n`)
      .join('')}${partial}`,
  );
  partial = '';
}

/** Who at the demo hotel signs in to the console, to answer its guests from the Inbox. */
const RECEPTION = 'reception@harbor.demo';

/**
 * The demo customer's key: the remembered one while the service still knows it, else a new
 * customer, whose reception gets a one-time console link (printed on that start only).
 */
async function demoCustomer(): Promise<{ apiKey: string; receptionLink?: string }> {
  if (existsSync(statePath)) {
    const { apiKey } = JSON.parse(readFileSync(statePath, 'utf8')) as Provisioned;
    // A store wiped while demo.json stayed would refuse it: then the demo starts over.
    const probe = await fetch(`${serviceUrl}/api/v1/agents?per_page=1`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    if (probe.status !== 401) return { apiKey };
    rmSync(statePath);
  }
  const made = spawnSync(
    process.execPath,
    // Reception answers guests: the agent role (README, Your team) offers it the Inbox, Conversations and Analytics.
    [
      ...TSX,
      'server/src/admin.ts',
      'create-customer',
      '--name',
      'Harbor Hotel (demo)',
      '--email',
      RECEPTION,
      '--role',
      'agent',
    ],
    {
      cwd: ROOT,
      // The link must point at the service as it runs (PORT=0 picks its port only at start).
      env: { ...process.env, PUBLIC_BASE_URL: process.env.PUBLIC_BASE_URL ?? serviceUrl },
      encoding: 'utf8',
    },
  );
  const apiKey = /^API key: (vak_\S+)$/m.exec(made.stdout)?.[1];
  if (!apiKey) throw new Error(`demo: could not create its customer: ${made.stderr}`);
  return { apiKey, receptionLink: /^Console sign-in: (\S+)$/m.exec(made.stdout)?.[1] };
}

try {
  mkdirSync(dataDir, { recursive: true });
  const customer = await demoCustomer();
  const demo = await startDemo({
    serviceUrl,
    apiKey: customer.apiKey,
    port: demoPort,
    host: process.env.HOST ?? '127.0.0.1',
    statePath,
    // No model and no server needed: the hotel's concierge answers from its guest guide.
    answeredBy: 'knowledge',
  });
  closeDemo = demo.close;
  // The service's own start lines are in `held`; whether they carry a key says if this was a first start.
  const firstStart = (held ?? []).some((line) => line.startsWith('API key: '));
  const reception = customer.receptionLink
    ? `Demo console sign-in (${RECEPTION}, the hotel's Inbox): ${customer.receptionLink}\n`
    : '';
  release(
    `Demo at ${demo.url}\n${reception}${hearingLine(serviceEnv)}\n${voiceLine(serviceEnv)}\n${nextSteps({ url: serviceUrl, firstStart }, demo.url)}`,
  );
} catch (err) {
  release('');
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  failed = true;
  service.kill('SIGTERM');
}
