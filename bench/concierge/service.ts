import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICE_ENTRY, startTarget, type Target } from '../process.js';
import { type Deployed, type HookCall, provision, seedCustomer, startCustomer } from './kit.js';

export interface Concierge {
  /** One service process per node, all on the same store. */
  nodes: Target[];
  /** The SQLite file (when not on PostgreSQL), for the bare-store baseline on the same rows. */
  sqliteFile: string;
  dep: Deployed;
  /** The seeded customer's API key, for changing the deployment. */
  apiKey: string;
  stop(): Promise<void>;
}

/**
 * The service in its own process(es) on a fresh store (SQLite in a temp dir, or the given
 * PostgreSQL database), with one provisioned deployment whose hook is a bench customer server.
 */
export async function startConcierge(
  onHook: (call: HookCall, dep: Deployed) => void,
  o: {
    databaseUrl?: string;
    nodes?: number;
    nodeArgs?: string[];
    env?: NodeJS.ProcessEnv;
    /** Another build of the service than this checkout's (see bench/compare-builds.ts). */
    entry?: string;
  } = {},
): Promise<Concierge> {
  const dataDir = mkdtempSync(join(tmpdir(), 'concierge-bench-'));
  // The bench customer listens on loopback, which the egress guard refuses unless allowed; every
  // bench client comes from one address, which the per-address cap before hello would refuse.
  const env = {
    PORT: '0',
    DATA_DIR: dataDir,
    DATABASE_URL: o.databaseUrl ?? '',
    RATE_LIMIT_PER_MINUTE: '1000000',
    HOOK_ALLOWED_HOSTS: '*@127.0.0.1',
    PREHELLO_SOCKETS_PER_ADDRESS: '100000',
    DRAIN_S: '0',
    ...o.env,
  };
  const key = await seedCustomer({ dataDir, databaseUrl: o.databaseUrl });
  const nodes: Target[] = [];
  for (let i = 0; i < (o.nodes ?? 1); i++) nodes.push(await startTarget(o.entry ?? SERVICE_ENTRY, env, o.nodeArgs));
  let dep: Deployed | undefined;
  const customer = await startCustomer((call) => onHook(call, dep!));
  dep = await provision(nodes[0]!.url, key, customer.hookUrl);
  return {
    nodes,
    sqliteFile: join(dataDir, 'concierge.sqlite'),
    dep,
    apiKey: key,
    async stop() {
      await Promise.all(nodes.map((n) => n.stop()));
      await customer.close();
      if (!process.env.BENCH_KEEP) rmSync(dataDir, { recursive: true, force: true });
      else console.log(`kept ${dataDir}`);
    },
  };
}
