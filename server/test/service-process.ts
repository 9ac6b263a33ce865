import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import pg from 'pg';

export const ROOT = join(import.meta.dirname, '..', '..');

/** A port nothing listens on right now (a process's or a balancer's address, needed before it starts). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Whether `command` is on this machine (CI installs the Debian packages the tests run; a laptop may not have them). */
export const installed = (command: string): boolean => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;
export const TSX = ['--import', 'tsx'];

export interface NodeProcess {
  child: ChildProcess;
  /** The first capture of the line the process was waited for (its URL). */
  url: string;
  stdout: () => string;
  exited: Promise<number | null>;
}

/** An entry (TypeScript through tsx, or compiled JavaScript with no `loader`) in a process of its own; resolves once stdout has a line matching `ready`. */
export const startNodeProcess = (
  entry: string,
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  loader: readonly string[] = TSX,
): Promise<NodeProcess> => startProcess(process.execPath, [...loader, entry], env, ready);

/** A program in a process of its own, from the repository's root; resolves once stdout has a line matching `ready`. */
export function startProcess(
  command: string,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<NodeProcess> {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const name = args.at(-1) ?? command;
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    // A few seconds here; past 30 s on a loaded two-core CI machine compiling and starting several beside the
    // suite. One that never says it is ready is killed: a test that gave up on it must not leave it running.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${name}: no ${ready} line: ${out} ${err}`));
    }, 80_000);
    child.stdout!.on('data', () => {
      const match = ready.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1]!, stdout: () => out, exited });
      }
    });
    child.on('exit', (code) => reject(new Error(`${name} exited ${code}: ${err}`)));
  });
}

/** `server/src/main.ts`, resolved on its `Listening on` line; SIGTERM stops it without the drain unless `env` asks for one. */
export const startServiceProcess = (env: NodeJS.ProcessEnv): Promise<NodeProcess> =>
  startNodeProcess('server/src/main.ts', { DRAIN_S: '0', ...env }, /^Listening on (http:\/\/\S+)$/m);

/** The bootstrap key a first start prints right after its Listening line. */
/**
 * Service processes on loopback, quiet but for warnings, calling hooks on loopback: each kept in
 * `running`, for the test's sandbox to stop.
 */
export const loopbackNodes =
  (running: NodeProcess[]) =>
  async (env: NodeJS.ProcessEnv): Promise<NodeProcess> => {
    const node = await startServiceProcess({
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      HOOK_ALLOWED_HOSTS: '*@127.0.0.1',
      ...env,
    });
    running.push(node);
    return node;
  };

/** A node as the concierge kit's helpers address a service, its customer the bootstrap key's. */
export const nodeRef = (node: NodeProcess, key: string) => ({
  url: node.url,
  newCustomer: async () => ({ customerId: '', apiKey: key }),
});

export async function bootstrapKey(service: NodeProcess): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const key = /^API key: (vak_\S+)$/m.exec(service.stdout())?.[1];
    if (key) return key;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no API key line: ${service.stdout()}`);
}

/** Runs `work` against a new, empty database beside `adminUrl`'s, dropped afterwards. */
export async function withScratchDatabase<T>(
  adminUrl: string,
  prefix: string,
  work: (url: string) => Promise<T>,
): Promise<T> {
  const name = `${prefix}_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name}`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    return await work(url.toString());
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
