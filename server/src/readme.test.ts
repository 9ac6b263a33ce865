import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Widget } from '../test/concierge-kit.js';
import { waitFor } from '../test/harness.js';
import { bootstrapKey, type NodeProcess, ROOT, startNodeProcess } from '../test/service-process.js';

/**
 * The README's walkthrough, run as written after a plain `npm start` (its Quick start): every
 * ```sh test block in order in one shell, in an empty directory, with the files it says to save
 * saved. Only the service's address and the key it printed are put in place of the README's; the
 * reader's server listens on the README's own port, 3000. Each block's output must be the output
 * block shown after it (… stands for an id), and a visitor talks to the reader's own server between
 * the blocks before and after the visit.
 */
interface Block {
  lang: string;
  tags: string[];
  body: string;
  /** The plain block right after it: what running it prints. */
  shown?: string;
}

function readmeBlocks(): Block[] {
  const text = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const blocks: Block[] = [];
  const fence = /^```([^\n]*)\n([\s\S]*?)^```[ \t]*\n(\s*)/gm;
  let previous: Block | undefined;
  let previousEnd = -1;
  for (let m = fence.exec(text); m; m = fence.exec(text)) {
    const [lang = '', ...tags] = m[1]!.trim().split(/\s+/);
    // An untagged block right after a tested one is its output.
    if (!lang && previous?.tags.includes('test') && m.index === previousEnd) previous.shown = m[2];
    else blocks.push((previous = { lang, tags, body: m[2]! }));
    previousEnd = m.index + m[0].length;
  }
  return blocks;
}

/** Shell commands of the README that this test does not run, and what does. */
const RUN_ELSEWHERE: Record<string, string> = {
  'npm install': '.ci/run (npm ci, the same install from the lockfile)',
  'npm start': 'demo/start.test.ts (npm start, its block, its stop)',
  'TEST_DATABASE_URL=postgres://root@127.0.0.1:5432/test npm test': '.ci/run',
};

/** `expected`'s lines in `actual`, in order, where … matches any run of characters on its line. */
function expectShown(actual: string, expected: string, what: string): void {
  const pattern = expected
    .trimEnd()
    .split('\n')
    .map((line) =>
      line
        .split('…')
        .map((piece) => piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('[^\\n]*'),
    )
    .join('\\n');
  expect(actual.trimEnd(), what).toMatch(new RegExp(`^${pattern}$`));
}

describe('the README', () => {
  const blocks = readmeBlocks();

  it('has no shell command that nothing runs', () => {
    const shell = blocks.filter((b) => b.lang === 'sh');
    for (const block of shell) expect(block.tags[0], block.body).toMatch(/^(test|ci)$/);
    const elsewhere = shell
      .filter((b) => b.tags[0] === 'ci')
      .flatMap((b) => b.body.split('\n').filter((line) => line.trim() && !line.startsWith('#')));
    expect(elsewhere.sort()).toEqual(Object.keys(RUN_ELSEWHERE).sort());
    expect(readFileSync(join(ROOT, '.ci/run'), 'utf8')).toMatch(/^npm ci\b[\s\S]*^npm test$/m);
    expect(shell.filter((b) => b.tags[0] === 'test').length).toBeGreaterThanOrEqual(8);
  });

  it("walkthrough's json helper says what an answer lacks, with the answer, never a stack trace", () => {
    const helper = blocks.find((b) => b.lang === 'sh' && b.tags[0] === 'test')!.body;
    const refused = '{"success":false,"error":{"code":"egress_refused","message":"…"}}';
    const run = (input: string, path: string) =>
      spawnSync('bash', ['-c', `${helper}\nprintf '%s' '${input}' | json ${path}`], { encoding: 'utf8' });
    expect(run(refused, '.data.response.status')).toMatchObject({
      status: 1,
      stdout: '',
      stderr: `json: no .data.response.status in: ${refused}\n`,
    });
    expect(run('Bad Gateway', '.data')).toMatchObject({
      status: 1,
      stdout: '',
      stderr: 'json: no .data in: Bad Gateway\n',
    });
    expect(run('{"data":{"n":1}}', '.data')).toMatchObject({ status: 0, stdout: '{\n  "n": 1\n}\n', stderr: '' });
  });

  describe('walkthrough, against a real service', () => {
    let dir: string;
    let service: NodeProcess;
    let shell: ChildProcess | undefined;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'concierge-readme-'));
      // `npm start` as the Quick start runs it (its asset build done by the suite's own pretest), with nothing allowed beyond its defaults.
      service = await startNodeProcess(
        'demo/start.ts',
        {
          PORT: '0',
          DEMO_PORT: '0',
          HOST: '127.0.0.1',
          DATA_DIR: join(dir, 'data'),
          LOG_LEVEL: 'warn',
          DATABASE_URL: '',
          HOOK_ALLOWED_HOSTS: '',
        },
        /^Listening on (http:\/\/\S+)$/m,
      );
      // `npm start` compiles as it loads (tsx): on a loaded two-core machine that alone has taken over 30 s.
    }, 90_000);
    afterAll(async () => {
      // The shell's group holds the reader's server, started in the background.
      if (shell?.pid) {
        try {
          process.kill(-shell.pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      // A service that never started (its start timed out) has nothing to stop.
      service?.child.kill('SIGTERM');
      await service?.exited;
      rmSync(dir, { recursive: true, force: true });
    });

    it("takes a new key to a published agent, an active deployment, the reader's own server answering a visitor, and its records", async () => {
      const key = await bootstrapKey(service);
      const port = 3000;
      const demo = await waitFor(
        async () => /^Demo at (\S+)$/m.exec(service.stdout())?.[1],
        20_000,
        'the Demo at line',
      );
      const ours = (text: string) =>
        text
          .replaceAll('http://127.0.0.1:8787', service.url)
          .replaceAll('http://127.0.0.1:8788', demo)
          .replaceAll('vak_paste_yours_here', key);
      for (const file of blocks.filter((b) => b.tags[0]?.startsWith('file=')))
        writeFileSync(join(dir, file.tags[0]!.slice(5)), ours(file.body));

      const tested = blocks.filter((b) => b.lang === 'sh' && b.tags[0] === 'test');
      shell = spawn('bash', ['--noprofile', '--norc'], {
        cwd: dir,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { PATH: process.env.PATH, HOME: dir },
      });
      let out = '';
      let err = '';
      shell.stdout!.on('data', (d) => (out += d));
      shell.stderr!.on('data', (d) => (err += d));
      const exited = new Promise<number | null>((resolve) => shell!.on('exit', resolve));
      const marker = (i: number) => `::block ${i}::`;
      // Fails at once when the shell has stopped (a command failed under `set -e`), with what it printed.
      const until = (text: string) =>
        waitFor(
          async () => {
            if (shell!.exitCode !== null) throw new Error(`the walkthrough stopped before ${text}:\n${out}\n${err}`);
            return out.includes(text);
          },
          15_000,
          text,
        ).catch((e: Error) => {
          throw new Error(`${e.message}:\n${out}\n${err}`);
        });
      shell.stdin!.write('set -eo pipefail\n');
      const run = async (from: number, to: number) => {
        for (let i = from; i < to; i++) shell!.stdin!.write(`${ours(tested[i]!.body)}\necho '${marker(i)}'\n`);
        await until(marker(to - 1));
      };

      const visit = tested.findIndex((b) => b.tags.includes('after-visit'));
      expect(visit).toBeGreaterThan(0);
      await run(0, visit);

      // Step 5, as a browser would do it: the reader's page hands out a token, the widget talks.
      const deploymentId: string = JSON.parse(readFileSync(join(dir, 'deployment.json'), 'utf8')).data.id;
      const token = (
        (await (await fetch(`http://localhost:${port}/token`, { method: 'POST' })).json()) as { token: string }
      ).token;
      const widget = await Widget.open(service, deploymentId, { origin: `http://localhost:${port}` });
      await widget.hello(token);
      expect((await widget.next('greeting')).text).toBe('Hello, this is the front desk. How can I help you today?');
      widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'When is breakfast?', mode: 'text' });
      const reply = await widget.next('reply');
      expect(reply.text).toBe('You asked: "When is breakfast?". Breakfast is from 7 to 10.');
      // The reader's server streamed it from its async iterator: a part per word, in order, before the whole.
      const parts = widget.frames.filter((f) => f.type === 'reply_part');
      expect(parts.map((p) => p.part)).toEqual(parts.map((_, i) => i));
      expect(parts.map((p) => p.text).join('')).toBe(reply.text);
      expect(parts.length).toBeGreaterThan(5);
      expect(parts.every((p) => p.seq < reply.seq)).toBe(true);
      widget.close();

      await run(visit, tested.length);
      shell.stdin!.end();
      expect(await exited, err).toBe(0);

      const outputs = out.split(/^::block \d+::\n/m);
      tested.forEach((block, i) => {
        if (block.shown !== undefined) expectShown(outputs[i]!, ours(block.shown), `the output of:\n${block.body}`);
      });
    }, 60_000);
  });
});
