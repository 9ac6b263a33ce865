import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, ROOT } from './service-process.js';

export const HAPROXY_CFG = join(ROOT, 'deploy', 'haproxy.cfg');
export const NGINX_CONF = join(ROOT, 'deploy', 'nginx.conf');

export interface Balancer {
  url: string;
  output: () => string;
  stop(): Promise<void>;
}

/**
 * HAProxy running `deploy/haproxy.cfg` in the foreground, its addresses from the environment as
 * the file says (on `port`, or any free one). With fewer than three nodes the other `server` lines are left out of a copy in
 * `dir`; with three the file is used as it is.
 */
export async function startHaproxy(dir: string, nodes: readonly string[], port?: number): Promise<Balancer> {
  let file = HAPROXY_CFG;
  if (nodes.length < 3) {
    file = join(dir, 'haproxy.cfg');
    const unused = new RegExp(`^\\s*server node[${nodes.length + 1}-3] .*$`, 'gm');
    writeFileSync(file, readFileSync(HAPROXY_CFG, 'utf8').replace(unused, ''));
  }
  const bind = port ?? (await freePort());
  const env: NodeJS.ProcessEnv = { ...process.env, CONCIERGE_BIND: `127.0.0.1:${bind}` };
  nodes.forEach((node, i) => (env[`CONCIERGE_NODE${i + 1}`] = node));
  const child = spawn('haproxy', ['-db', '-f', file], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const url = `http://127.0.0.1:${bind}`;
  return { url, ...(await whenServing(child, url, '/healthz')) };
}

/** nginx running a copy of `deploy/nginx.conf` in `dir`: its port, upstreams and logs moved there. */
export async function startNginx(dir: string, nodes: readonly string[]): Promise<Balancer> {
  const port = await freePort();
  const conf = readFileSync(NGINX_CONF, 'utf8')
    .replace(
      /^(\s*)server 127\.0\.0\.1:8787 (.*)\n(?:\s*server 127\.0\.0\.1:\d+ .*\n)*/m,
      (_lines, indent: string, rest: string) => nodes.map((n) => `${indent}server ${n} ${rest}\n`).join(''),
    )
    .replace('listen 8080;', `listen 127.0.0.1:${port};`)
    .replaceAll('/var/log/nginx/', `${dir}/`);
  const file = join(dir, 'nginx.conf');
  writeFileSync(file, conf);
  const child = spawn('nginx', ['-c', file, '-p', dir, '-g', `daemon off; pid ${dir}/nginx.pid;`], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const url = `http://127.0.0.1:${port}`;
  return { url, ...(await whenServing(child, url, '/healthz')) };
}

async function whenServing(child: ChildProcess, url: string, path: string): Promise<Omit<Balancer, 'url'>> {
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the balancer exited ${child.exitCode}: ${out}`);
    const res = await fetch(url + path).catch(() => undefined);
    if (res?.status === 200) return { output: () => out, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`the balancer at ${url} never served ${path}: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
