import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHaproxy } from '../../server/test/balancer.js';
import { withScratchDatabase } from '../../server/test/service-process.js';
import { quantile } from '../stats.js';
import { mintUserToken } from '../../sdk/node/src/index.js';
import { BenchSocket } from './kit.js';
import { type Latency, MEASURED, measureReplies, prepareTurns, WARM_UP } from './replies.js';
import { startConcierge } from './service.js';

export const RESUMING_WIDGETS = 200;
/** The drained node's wait: longer than HAProxy's two failed checks a second apart (deploy/haproxy.cfg). */
const DRAIN_S = 3;

export interface Balanced {
  singleNode: Latency;
  /** The same through HAProxy with only the one node behind it: the balancer's own hop. */
  hopOnly: Latency;
  balanced: Latency;
  /** Close (1001) → `ready` on another node, for each widget of the drained node (reconnecting at once). */
  resume: { widgets: number; p50: number; p99: number };
}

/**
 * Two service processes on one PostgreSQL behind HAProxy running deploy/haproxy.cfg: replies
 * posted through it (round robin, each to either node) for widgets it spread over both, against
 * the same replies posted straight to the one node holding every widget; then one node drained
 * with SIGTERM while 200 widgets are connected through the balancer.
 */
export async function balancedLatency(adminUrl: string): Promise<Balanced> {
  return withScratchDatabase(adminUrl, 'concierge_bench', async (databaseUrl) => {
    const concierge = await startConcierge(() => {}, {
      databaseUrl,
      nodes: 2,
      env: { TRUST_PROXY: '1', DRAIN_S: String(DRAIN_S) },
    });
    const dir = mkdtempSync(join(tmpdir(), 'concierge-bench-lb-'));
    const balancer = await startHaproxy(
      dir,
      concierge.nodes.map((n) => new URL(n.url).host),
    );
    try {
      // Both nodes pass two health checks before anything is measured.
      await new Promise((r) => setTimeout(r, 3_000));
      const [a] = concierge.nodes as [(typeof concierge.nodes)[0]];
      const singleNode = await measureReplies(
        a.url,
        concierge.dep,
        await prepareTurns(a.url, concierge.dep, WARM_UP + MEASURED),
      );
      const alone = await startHaproxy(mkdtempSync(join(dir, 'alone-')), [new URL(a.url).host]);
      let hopOnly: Latency;
      try {
        await new Promise((r) => setTimeout(r, 3_000));
        hopOnly = await measureReplies(
          alone.url,
          concierge.dep,
          await prepareTurns(alone.url, concierge.dep, WARM_UP + MEASURED),
        );
      } finally {
        await alone.stop();
      }
      const balanced = await measureReplies(
        balancer.url,
        concierge.dep,
        await prepareTurns(balancer.url, concierge.dep, WARM_UP + MEASURED),
      );
      const resume = await drainedResume(balancer.url, concierge);
      return { singleNode, hopOnly, balanced, resume };
    } finally {
      await balancer.stop();
      await concierge.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

async function drainedResume(
  balancerUrl: string,
  concierge: Awaited<ReturnType<typeof startConcierge>>,
): Promise<Balanced['resume']> {
  const { dep } = concierge;
  const wsUrl = `${balancerUrl.replace(/^http/, 'ws')}/embed/concierge/${dep.deploymentId}/ws`;
  const tokens = Array.from({ length: RESUMING_WIDGETS }, (_, i) =>
    mintUserToken({ secret: dep.secret, deploymentId: dep.deploymentId, sub: `resume-${i}` }),
  );
  const widgets = await Promise.all(tokens.map((_, i) => BenchSocket.session(balancerUrl, dep, `resume-${i}`)));
  const samples: number[] = [];
  // A widget of the drained node is told 1001 and comes back through the balancer at once,
  // resuming its conversation (the real widget waits 0.25 to 0.5 s of jittered backoff first).
  const resumed = widgets.map(
    (widget, i) =>
      new Promise<void>((resolve, reject) => {
        widget.ws.once('close', async (code) => {
          if (code !== 1001) return resolve();
          const closedAt = performance.now();
          try {
            const again = await BenchSocket.open(wsUrl);
            const ready = await again.request(
              { type: 'hello', token: tokens[i], conversation_id: widget.conversationId, last_seq: 0 },
              (f) => f.type === 'ready' || f.type === 'error',
            );
            if (ready.type !== 'ready' || !ready.resumed) throw new Error(`resume refused: ${JSON.stringify(ready)}`);
            samples.push(performance.now() - closedAt);
            again.close();
            resolve();
          } catch (err) {
            reject(err);
          }
        });
      }),
  );
  await concierge.nodes[1]!.stop();
  for (const widget of widgets) widget.close();
  await Promise.all(resumed);
  return { widgets: samples.length, p50: quantile(samples, 0.5), p99: quantile(samples, 0.99) };
}
