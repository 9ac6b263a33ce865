import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** The service as it runs in production: compiled by `npm run build:server`, started with plain `node` (see {@link buildService}). */
export const SERVICE_ENTRY = 'dist/server/src/main.js';

/** Compiles the service once per bench run, so every scenario measures the compiled code. */
export function buildService(): void {
  const built = spawnSync('npm', ['run', '--silent', 'build:server'], { encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`npm run build:server failed:\n${built.stdout}${built.stderr}`);
}

/** User plus system CPU seconds a process has used (Linux /proc). */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Node flags for targets whose memory is measured: SIGUSR2 then collects garbage. */
export const MEASURED_MEMORY_ARGS = ['--expose-gc', '--import', './bench/targets/gc-on-signal.mjs'];

export interface Target {
  url: string;
  child: ChildProcess;
  /** Milliseconds from spawn to the `Listening on` line. */
  startMs: number;
  /** Resident memory of the target process now, in bytes (Linux /proc). */
  rss(): number;
  /** Resident memory after a full collection (targets started with {@link MEASURED_MEMORY_ARGS}). */
  settledRss(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts an entry in its own process (so load and server never share a core's loop): compiled
 * JavaScript with plain `node`, a TypeScript baseline through tsx.
 */
export function startTarget(entry: string, env: NodeJS.ProcessEnv = {}, nodeArgs: string[] = []): Promise<Target> {
  const began = performance.now();
  const loader = entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
  // BENCH_CPU_PROF=dir: each service process writes a V8 CPU profile there when it stops (read with bench/profile-summary.ts).
  const profile =
    entry === SERVICE_ENTRY && process.env.BENCH_CPU_PROF
      ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
      : [];
  // BENCH_SQL_PROFILE=1: each service process prints the time its SQLite statements took, by statement, when it stops.
  if (entry === SERVICE_ENTRY && process.env.BENCH_SQL_PROFILE)
    profile.push('--import', './bench/targets/sql-profile.mjs');
  const child = spawn(process.execPath, [...loader, ...profile, ...nodeArgs, entry], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const rss = () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]) * 1024;
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk) => {
      if (out === null) return;
      out += chunk;
      const match = /Listening on (http:\/\/\S+)/.exec(out);
      if (!match) return;
      const startMs = performance.now() - began;
      // From here on its output is drained and dropped, like logs shipped elsewhere.
      out = null as unknown as string;
      resolve({
        url: match[1]!,
        child,
        startMs,
        rss,
        async settledRss() {
          for (let i = 0; i < 3; i++) {
            child.kill('SIGUSR2');
            await new Promise((r) => setTimeout(r, 500));
          }
          return rss();
        },
        stop: () =>
          new Promise((done) => {
            if (child.exitCode !== null) return done();
            child.once('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
    child.once('exit', (code) => reject(new Error(`${entry} exited with ${code}`)));
  });
}
