import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../server/test/harness.js';
import { installed } from '../server/test/service-process.js';
import type { Provisioned } from './provision.js';

const ROOT = join(import.meta.dirname, '..');
/**
 * How long a start may take to print its block (tsx compiles the service on the way): about 5 s
 * here, but past 20 s on a CI machine running the rest of the suite beside it.
 */
const STARTUP_MS = 45_000;

interface Npm {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

/** `npm start` or `npm run service` as a person runs it (its asset build skipped: the suite's own `pretest` did it). */
function npm(args: string[], env: NodeJS.ProcessEnv): Npm {
  const child = spawn('npm', [...args, '--ignore-scripts'], {
    cwd: ROOT,
    env: { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'info', DATABASE_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  return {
    child,
    out: () => out,
    err: () => err,
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
  };
}

const portOf = (url: string) => Number(new URL(url).port);

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Both ports stop accepting within 5 s of the signal. */
const freedWithin5s = (ports: number[]) =>
  waitFor(
    async () => !(await Promise.all(ports.map(accepts))).some(Boolean),
    5_000,
    `ports ${ports.join(', ')} to close`,
  );

/** The pids below `pid`, nearest first. */
function descendants(pid: number): number[] {
  // ps exits 1 when there are none.
  const children = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout.trim();
  const direct = children ? children.split('\n').map((line) => Number(line.trim())) : [];
  return direct.flatMap((child) => [child, ...descendants(child)]);
}

const commandOf = (pid: number) => execFileSync('ps', ['-o', 'args=', '-p', String(pid)], { encoding: 'utf8' }).trim();

describe('npm start and npm run service, started and stopped as a person does', () => {
  const dirs: string[] = [];
  const running: Npm[] = [];
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'concierge-start-'));
    dirs.push(dir);
    return dir;
  };
  const run = (args: string[], env: NodeJS.ProcessEnv) => {
    const started = npm(args, env);
    running.push(started);
    return started;
  };
  afterEach(() => {
    for (const { child } of running.splice(0))
      for (const pid of [child.pid!, ...descendants(child.pid!)].reverse()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('npm start prints one start block before any log line, and SIGTERM to npm frees both ports within 5 s, exit 0', async () => {
    const dir = dataDir();
    const started = run(['start'], { PORT: '0', DEMO_PORT: '0', DATA_DIR: dir });
    const demoUrl = await waitFor(
      async () => /^Demo at (http:\/\/\S+)$/m.exec(started.out())?.[1],
      STARTUP_MS,
      'the Demo at line',
    );
    await waitFor(async () => started.out().includes('Log lines follow'), STARTUP_MS, 'the next steps');
    const out = started.out().slice(started.out().indexOf('Listening on'));
    const serviceUrl = /^Listening on (http:\/\/\S+)$/m.exec(out)![1]!;
    // The block, in one piece: where things run, the key and link shown once, the next steps; logs only after it.
    expect(out).toMatch(
      /^Listening on \S+\nConsole at \S+\/console\/\nAPI key: vak_\S+\nConsole sign-in: \S+\nDemo at \S+\nDemo console sign-in \(reception@harbor\.demo, the hotel's Inbox\): \S+\/console\/#\/welcome\/\S+\nSpeech recognition: .+\nVoice: .+\n\nNext:\n {2}1\. .+\n {2}2\. .+\n {2}3\. .+\n {5}Its server on port 3000 gets this service's hooks: npm start allows 127\.0\.0\.1:3000 and localhost:3000 as it does the demo's port,\n {5}and a model on this machine \(Ollama 11434, llama\.cpp 8080, vLLM 8000\) may answer as a model endpoint\.\nStop with Ctrl-C\. .+\n\n/,
    );
    expect(out.slice(0, out.indexOf('Next:'))).not.toContain('{"level"');
    // The hotel speaks with espeak-ng where it is installed, and the block says so plainly.
    expect(/^Voice: .+$/m.exec(out)![0]).toBe(
      installed('espeak-ng')
        ? 'Voice: espeak-ng, robotic but the same in every browser; for a natural voice, set TEXT_TO_SPEECH_URL to a Kokoro or Piper server (README, "The agent\'s own voice")'
        : "Voice: the browser's (install espeak-ng, or set TEXT_TO_SPEECH_URL, for the service's own: README, \"The agent's own voice\")",
    );
    // And hears with PocketSphinx where it is installed (Firefox has a microphone), saying how good it is.
    expect(/^Speech recognition: .+$/m.exec(out)![0]).toBe(
      installed('pocketsphinx_continuous')
        ? 'Speech recognition: PocketSphinx on this machine, English only and often wrong, in browsers that cannot recognise speech themselves (Firefox), hands-free (README, "Hands-free voice"); for a good one, set SPEECH_TO_TEXT_URL to a Whisper server (README, "Voice in every browser")'
        : 'Speech recognition: only where the browser has its own (Chrome); install pocketsphinx pocketsphinx-en-us, or set SPEECH_TO_TEXT_URL, for every browser (README, "Voice in every browser")',
    );
    // One host in every link: a console link opened from one line is signed in on the next.
    const block = out.slice(0, out.indexOf('Stop with Ctrl-C'));
    expect(new Set([...block.matchAll(/http:\/\/[^\s/]+/g)].map(([origin]) => new URL(origin).hostname))).toEqual(
      new Set(['127.0.0.1']),
    );
    expect(out).toContain(`Talk to the demo hotel's concierge at ${demoUrl}`);
    expect((await fetch(`${serviceUrl}/healthz`)).status).toBe(200);

    // Hooks may reach the demo hotel's port on loopback, and no other service there.
    const demo = JSON.parse(readFileSync(join(dir, 'demo.json'), 'utf8')) as Provisioned;
    const testHook = async (hookUrl: string) => {
      const headers = { authorization: `Bearer ${demo.apiKey}`, 'content-type': 'application/json' };
      const path = `${serviceUrl}/api/v1/deployments/${demo.deploymentId}`;
      expect(
        (await fetch(path, { method: 'PUT', headers, body: JSON.stringify({ channel_config: { hook_url: hookUrl } }) }))
          .status,
      ).toBe(200);
      return (
        (await (await fetch(`${path}/test-hook`, { method: 'POST', headers })).json()) as {
          data: { error: string | null };
        }
      ).data.error;
    };
    expect(await testHook(`http://127.0.0.1:${portOf(demoUrl)}/hook`)).toBeNull();
    expect(await testHook(`http://127.0.0.1:${portOf(serviceUrl)}/healthz`)).toBe('egress_refused');

    // A model on this machine at Ollama's port may be a model endpoint; another port is refused, naming the setting.
    const modelTest = async (baseUrl: string) => {
      const headers = { authorization: `Bearer ${demo.apiKey}`, 'content-type': 'application/json' };
      const endpoint = (await (
        await fetch(`${serviceUrl}/api/v1/model-endpoints`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ name: baseUrl, base_url: baseUrl }),
        })
      ).json()) as { data: { id: string } };
      const tested = await fetch(`${serviceUrl}/api/v1/model-endpoints/${endpoint.data.id}/test`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: 'llama3' }),
      });
      return ((await tested.json()) as { data: { error: string } }).data.error;
    };
    expect(await modelTest('http://127.0.0.1:11434/v1')).not.toMatch(/public address/);
    expect(await modelTest('http://127.0.0.1:11435/v1')).toMatch(
      /^127\.0\.0\.1 is not a public address; the service calls only public addresses unless its operator allows this one in HOOK_ALLOWED_HOSTS: models@127\.0\.0\.1:11435 \(every customer's model endpoints\) or [0-9a-f-]{36}@127\.0\.0\.1:11435 \(this customer's alone\)$/,
    );

    // The hotel's concierge answers from its guest guide, fetched from the demo site: no model, no server.
    const get = async (path: string) =>
      (
        (await (
          await fetch(`${serviceUrl}${path}`, { headers: { authorization: `Bearer ${demo.apiKey}` } })
        ).json()) as any
      ).data;
    expect((await get(`/api/v1/agents/${demo.agentId}/spec`)).agent_spec.responder).toEqual({
      type: 'knowledge',
    });
    const agent = await get(`/api/v1/agents/${demo.agentId}`);
    // The guide in English, German, French and Spanish: each guest is answered in their language.
    const guides = await get(`/api/v1/knowledge-bases/${agent.knowledge_base_id}/documents`);
    expect(guides.map((g: { url: string }) => g.url).sort()).toEqual(
      ['', '/de', '/es', '/fr'].map((language) => `${demoUrl}/guide${language}`),
    );
    for (const guide of guides) {
      expect(guide).toMatchObject({ source: 'url', format: 'html', fetch_error: null });
      expect(guide.chunk_count).toBeGreaterThanOrEqual(8);
    }
    expect((await get(`/api/v1/agents/${demo.agentId}/spec`)).agent_spec.greeting).toMatchObject({
      en: 'Hello {{visitor.name|there}}, this is the Harbor Hotel concierge. How can I help you today?',
      de: 'Hallo {{visitor.name|zusammen}}, hier ist der Concierge des Harbor Hotels. Wie kann ich Ihnen helfen?',
    });

    started.child.kill('SIGTERM');
    await freedWithin5s([portOf(serviceUrl), portOf(demoUrl)]);
    expect(await started.exited).toBe(0);
    expect(started.err()).not.toMatch(/Error|at .+\.ts:\d+/);
  }, 90_000);

  it('SIGINT to the service process, deep in the tree, stops the demo and npm too, exit 0', async () => {
    const started = run(['start'], { PORT: '0', DEMO_PORT: '0', DATA_DIR: dataDir() });
    const demoUrl = await waitFor(
      async () => /^Demo at (http:\/\/\S+)$/m.exec(started.out())?.[1],
      STARTUP_MS,
      'the Demo at line',
    );
    const serviceUrl = /^Listening on (http:\/\/\S+)$/m.exec(started.out())![1]!;
    const service = descendants(started.child.pid!).find((pid) => commandOf(pid).includes('server/src/main.ts'));
    expect(service).toBeDefined();
    process.kill(service!, 'SIGINT');
    await freedWithin5s([portOf(serviceUrl), portOf(demoUrl)]);
    expect(await started.exited).toBe(0);
  }, 90_000);

  it('npm run service drains on SIGTERM to npm (/readyz 503 at once), then stops within 5 s, exit 0, and a later start says where its key went', async () => {
    const dir = dataDir();
    const first = run(['run', 'service'], { PORT: '0', DATA_DIR: dir, DRAIN_S: '1' });
    const url = await waitFor(
      async () => /^Listening on (http:\/\/\S+)$/m.exec(first.out())?.[1],
      STARTUP_MS,
      'the Listening line',
    );
    await waitFor(async () => first.out().includes('Log lines follow'), STARTUP_MS, 'the next steps');
    expect(first.out()).toContain(`The API, described: ${url}/openapi.json`);
    first.child.kill('SIGTERM');
    await waitFor(async () => (await fetch(`${url}/readyz`)).status === 503, 1_000, '/readyz to turn 503');
    await freedWithin5s([portOf(url)]);
    expect(await first.exited).toBe(0);

    const second = run(['run', 'service'], { PORT: '0', DATA_DIR: dir });
    await waitFor(async () => second.out().includes('Log lines follow'), STARTUP_MS, 'the next steps');
    expect(second.out()).not.toContain('API key: vak_');
    expect(second.out()).toContain(
      "(The bootstrap key and console link were printed on this store's first start. Another customer: npm run admin -- create-customer --name NAME --email EMAIL)",
    );
    second.child.kill('SIGINT');
    expect(await second.exited).toBe(0);
  }, 90_000);

  describe('a busy port', () => {
    let holder: Server;
    const hold = () =>
      new Promise<number>((resolve) => {
        holder = createServer().listen(0, '127.0.0.1', () => resolve((holder.address() as { port: number }).port));
      });
    afterEach(() => new Promise<void>((resolve) => holder.close(() => resolve())));

    it('for the service is one line naming PORT, exit 1, and no key created that nobody saw', async () => {
      const port = await hold();
      const dir = dataDir();
      const started = run(['run', 'service'], { PORT: String(port), DATA_DIR: dir });
      expect(await started.exited).toBe(1);
      expect(
        started
          .err()
          .trim()
          .split('\n')
          .filter((line) => !line.startsWith('npm ')),
      ).toEqual([`Port ${port} is already in use: stop what holds it, or set PORT to a free port (PORT=0 picks one).`]);
      // The store stayed empty: the next start, on a free port, prints the bootstrap key.
      const next = run(['run', 'service'], { PORT: '0', DATA_DIR: dir });
      await waitFor(async () => /^API key: vak_\S+$/m.test(next.out()), STARTUP_MS, 'the API key line');
      next.child.kill('SIGTERM');
      expect(await next.exited).toBe(0);
    }, 90_000);

    it('for the demo is one line naming DEMO_PORT, and npm start stops the service it started, exit 1', async () => {
      const port = await hold();
      const started = run(['start'], { PORT: '0', DEMO_PORT: String(port), DATA_DIR: dataDir() });
      expect(await started.exited).toBe(1);
      expect(started.err()).toContain(
        `Port ${port} is already in use: stop what holds it, or set DEMO_PORT to a free port (DEMO_PORT=0 picks one).`,
      );
      const serviceUrl = /^Listening on (http:\/\/\S+)$/m.exec(started.out())![1]!;
      await freedWithin5s([portOf(serviceUrl)]);
    }, 90_000);
  });
});
