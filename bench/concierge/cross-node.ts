import pg from 'pg';
import { withScratchDatabase } from '../../server/test/service-process.js';
import { quantile } from '../stats.js';
import {
  durableFloorLatency,
  type Latency,
  MEASURED,
  measureReplies,
  prepareTurns,
  resolvedTurns,
  WARM_UP,
} from './replies.js';
import { storeReplyFloor } from './store-floor.js';
import { startConcierge } from './service.js';

export interface CrossNode {
  selectOneMs: number;
  /** A bare pg transaction of the reply's statements on the same database and rows. */
  store: Latency;
  /** The bare node:http → ws floor storing the same in a bare pg transaction before each push. */
  durable: Latency;
  singleNode: Latency;
  crossNode: Latency;
}

async function selectOneRoundTrip(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const samples: number[] = [];
  for (let i = 0; i < 2_000; i++) {
    const started = performance.now();
    await client.query('select 1');
    samples.push(performance.now() - started);
  }
  await client.end();
  return quantile(samples.slice(500), 0.5);
}

/** Two service processes on one PostgreSQL database; every widget is on node A. */
export async function crossNodeLatency(adminUrl: string): Promise<CrossNode> {
  return withScratchDatabase(adminUrl, 'concierge_bench', async (databaseUrl) => {
    const concierge = await startConcierge(() => {}, { databaseUrl, nodes: 2 });
    try {
      const [a, b] = concierge.nodes as [(typeof concierge.nodes)[0], (typeof concierge.nodes)[0]];
      const selectOneMs = await selectOneRoundTrip(databaseUrl);
      const turns = await prepareTurns(a.url, concierge.dep, WARM_UP + MEASURED);
      const singleNode = await measureReplies(a.url, concierge.dep, turns);
      const store = await storeReplyFloor(databaseUrl, resolvedTurns(turns, concierge.dep));
      const durable = await durableFloorLatency(databaseUrl, resolvedTurns(turns, concierge.dep));
      const crossNode = await measureReplies(
        b.url,
        concierge.dep,
        await prepareTurns(a.url, concierge.dep, WARM_UP + MEASURED),
      );
      return { selectOneMs, store, durable, singleNode, crossNode };
    } finally {
      await concierge.stop();
    }
  });
}
