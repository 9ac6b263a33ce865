import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { SERVICE_ENTRY, startTarget } from './process.js';
import { seedAgents } from './seed.js';

const CONNECTIONS = 50;
const DURATION_S = 5;
const AGENTS = 10_000;

interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
}

async function load(name: string, url: string, headers: Record<string, string> = {}): Promise<Figures> {
  await autocannon({ url, connections: CONNECTIONS, duration: 1, headers }); // warm-up: JIT and caches
  const r = await autocannon({ url, connections: CONNECTIONS, duration: DURATION_S, headers });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx + r.errors };
}

const fmt = (n: number, digits = 0) => n.toFixed(digits).padStart(9);

/** GET /api/v1/agents under load, against bare node:http and bare Express serving a fixed list. */
export async function managementList(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'concierge-bench-'));
  try {
    const apiKey = await seedAgents(dataDir, AGENTS);
    const serviceEnv = {
      PORT: '0',
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_MINUTE: '1000000',
    };

    const coldStarts: number[] = [];
    for (let i = 0; i < 3; i++) {
      const t = await startTarget(SERVICE_ENTRY, serviceEnv);
      coldStarts.push(t.startMs);
      await t.stop();
    }

    const results: Figures[] = [];
    const bare = await startTarget('bench/targets/bare-http.ts');
    results.push(await load('baseline A: bare node:http', `${bare.url}/api/v1/agents`));
    await bare.stop();
    const exp = await startTarget('bench/targets/bare-express.ts');
    results.push(await load('baseline B: bare Express 5', `${exp.url}/api/v1/agents`));
    await exp.stop();
    for (const level of ['info', 'warn']) {
      const service = await startTarget(SERVICE_ENTRY, { ...serviceEnv, LOG_LEVEL: level });
      results.push(
        await load(`service, LOG_LEVEL=${level}`, `${service.url}/api/v1/agents?per_page=20`, {
          authorization: `Bearer ${apiKey}`,
        }),
      );
      await service.stop();
    }

    const [a, b] = results as [Figures, Figures];
    console.log(
      `\nGET /api/v1/agents?per_page=20 — SQLite, ${AGENTS} agents, ${CONNECTIONS} connections, ${DURATION_S} s, Node ${process.version}`,
    );
    console.log(
      `${'target'.padEnd(30)}${'req/s'.padStart(9)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'vs A'.padStart(9)}${'vs B'.padStart(9)}${'non-2xx'.padStart(9)}`,
    );
    for (const r of results) {
      console.log(
        `${r.name.padEnd(30)}${fmt(r.rps)}${fmt(r.p50, 1)}${fmt(r.p99, 1)}${fmt(r.rps / a.rps, 2)}${fmt(r.rps / b.rps, 2)}${fmt(r.non2xx)}`,
      );
    }
    const sorted = [...coldStarts].sort((x, y) => x - y);
    console.log(
      `cold start to "Listening" (compiled, ${AGENTS} agents in store): median ${sorted[1]!.toFixed(0)} ms (runs: ${coldStarts.map((c) => c.toFixed(0)).join(', ')} ms)`,
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
