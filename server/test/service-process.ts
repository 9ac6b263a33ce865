import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import pg from 'pg';

export const ROOT = join(import.meta.dirname, '..', '..');
export const TSX = ['--import', 'tsx'];

export interface ServiceProcess {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  exited: Promise<number | null>;
}

/** `server/src/main.ts` in a process of its own; resolves on its `Listening on` line. */
export function startServiceProcess(env: NodeJS.ProcessEnv): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [...TSX, 'server/src/main.ts'], { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no Listening line: ${out} ${err}`)), 15_000);
    child.stdout!.on('data', () => {
      const match = /^Listening on (http:\/\/\S+)$/m.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve({ child, url: match[1]!, stdout: () => out, exited });
      }
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
  });
}

/** The bootstrap key a first start prints right after its Listening line. */
export async function bootstrapKey(service: ServiceProcess): Promise<string> {
  for (let i = 0; i < 50; i++) {
    const key = /^API key: (vak_\S+)$/m.exec(service.stdout())?.[1];
    if (key) return key;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no API key line: ${service.stdout()}`);
}

/** Runs `work` against a new, empty database beside `adminUrl`'s, dropped afterwards. */
export async function withScratchDatabase<T>(adminUrl: string, prefix: string, work: (url: string) => Promise<T>): Promise<T> {
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
