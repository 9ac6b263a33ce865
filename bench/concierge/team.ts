import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import autocannon from 'autocannon';
import { SERVICE_ENTRY, startTarget, type Target } from '../process.js';
import { quantile } from '../stats.js';

export const TEAM = {
  /** The service as it was before roles and the audit log (README, Your team); BENCH_BEFORE names another. */
  before: process.env.BENCH_BEFORE ?? 'eee62c7',
  connections: 50,
  seconds: 5,
  runs: 3,
};

export interface WriteFigures {
  /** Median requests a second over the runs. */
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

/** The service of `rev` compiled in a worktree of its own, sharing this checkout's node_modules. */
function buildAt(rev: string): { root: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), 'concierge-before-'));
  const git = (...args: string[]) => {
    const run = spawnSync('git', args, { encoding: 'utf8' });
    if (run.status !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr}`);
  };
  git('worktree', 'add', '--detach', '--force', root, rev);
  symlinkSync(resolve('node_modules'), join(root, 'node_modules'));
  const built = spawnSync('npm', ['run', '--silent', 'build:server'], { cwd: root, encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`build of ${rev} failed:\n${built.stdout}${built.stderr}`);
  return { root, remove: () => git('worktree', 'remove', '--force', root) };
}

/** A fresh store with a customer made by that version's own `npm run admin`: its key, and its user's welcome token. */
function provision(root: string, dataDir: string, role: string | undefined): { apiKey: string; welcome: string } {
  const args = [
    'create-customer',
    '--name',
    'Bench',
    '--email',
    'editor@bench.example',
    ...(role ? ['--role', role] : []),
  ];
  const made = spawnSync(process.execPath, [join(root, 'dist/server/src/admin.js'), ...args], {
    env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn' },
    encoding: 'utf8',
  });
  const apiKey = /^API key: (\S+)$/m.exec(made.stdout)?.[1];
  const welcome = /#\/welcome\/(\S+)$/m.exec(made.stdout)?.[1];
  if (!apiKey || !welcome) throw new Error(`could not provision: ${made.stdout}${made.stderr}`);
  return { apiKey, welcome };
}

/** One agent ready to be updated (its generation done), by the key. */
async function readyAgent(url: string, apiKey: string): Promise<string> {
  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  const made = await fetch(`${url}/api/v1/agents`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ name: 'Front desk', description: 'Bench' }),
  }).then((r) => r.json() as Promise<{ data: { agent_id: string } }>);
  const id = made.data.agent_id;
  for (;;) {
    const status = await fetch(`${url}/api/v1/agents/${id}/generation-status`, { headers }).then((r) => r.text());
    if (status.includes('"succeeded"')) return id;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * PUTs for `seconds`: every connection on one agent (`agents` of one), or each connection on an
 * agent of its own (as several people editing several agents).
 */
async function updates(url: string, agents: string[], headers: Record<string, string>): Promise<WriteFigures> {
  let next = 0;
  const options = {
    url,
    connections: TEAM.connections,
    headers: { ...headers, 'content-type': 'application/json' },
    requests: [
      {
        method: 'PUT' as const,
        body: JSON.stringify({ description: 'Answers guests of the bench hotel' }),
        setupRequest: (req: { path?: string }, context: { agent?: string }) => {
          context.agent ??= agents[next++ % agents.length]!;
          return { ...req, path: `/api/v1/agents/${context.agent}` };
        },
      },
    ],
  };
  await autocannon({ ...options, duration: 1 }); // warm-up: JIT and caches
  const r = await autocannon({ ...options, duration: TEAM.seconds });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors };
}

/** A service of `root` on a fresh SQLite store, its agent, and who updates it. */
async function started(root: string, role: string | undefined) {
  const dataDir = mkdtempSync(join(tmpdir(), 'concierge-bench-team-'));
  const { apiKey, welcome } = provision(root, dataDir, role);
  // This checkout's service by the name the bench's profiling flags know it (BENCH_CPU_PROF, BENCH_SQL_PROFILE).
  const entry = root === resolve('.') ? SERVICE_ENTRY : join(root, SERVICE_ENTRY);
  const target: Target = await startTarget(entry, {
    PORT: '0',
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '1000000',
  });
  const agents: string[] = [];
  for (let i = 0; i < TEAM.connections; i++) agents.push(await readyAgent(target.url, apiKey));
  const signedIn = await fetch(`${target.url}/console/welcome`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: welcome, password: 'a bench password 2026' }),
  });
  const session = /concierge_session=([^;]+)/.exec(signedIn.headers.get('set-cookie') ?? '')![1]!;
  const byKey = { authorization: `Bearer ${apiKey}` };
  return {
    key: () => updates(target.url, agents.slice(0, 1), byKey),
    keyMany: () => updates(target.url, agents, byKey),
    console: () =>
      updates(target.url, agents, { cookie: `concierge_session=${session}`, 'x-requested-with': 'concierge-console' }),
    async stop() {
      await target.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const median = (figures: WriteFigures[]): WriteFigures => ({
  rps: quantile(
    figures.map((f) => f.rps),
    0.5,
  ),
  p50: quantile(
    figures.map((f) => f.p50),
    0.5,
  ),
  p99: quantile(
    figures.map((f) => f.p99),
    0.5,
  ),
  non2xx: Math.max(...figures.map((f) => f.non2xx)),
});

/**
 * PUT /api/v1/agents/{id} under load, the service of today against itself before roles and the
 * audit log (built from TEAM.before), runs alternated: the role check and the audit record written
 * in the change's transaction are what differs. The console's session (an editor) is measured
 * beside the key.
 */
export async function teamWriteCost(): Promise<Record<string, WriteFigures>> {
  const before = buildAt(TEAM.before);
  try {
    const runs: Record<string, WriteFigures[]> = {};
    const measure = async (root: string, role: string | undefined, suffix: string) => {
      const service = await started(root, role);
      for (const kind of ['key', 'keyMany', 'console'] as const)
        (runs[`${kind}${suffix}`] ??= []).push(await service[kind]());
      await service.stop();
    };
    for (let run = 0; run < TEAM.runs; run++) {
      await measure(before.root, undefined, 'Before');
      await measure(resolve('.'), 'editor', '');
    }
    return Object.fromEntries(Object.entries(runs).map(([name, figures]) => [name, median(figures)]));
  } finally {
    before.remove();
  }
}
