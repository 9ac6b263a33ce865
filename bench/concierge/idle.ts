import { MEASURED_MEMORY_ARGS, startTarget, type Target } from '../process.js';
import { BenchSocket } from './kit.js';
import { startConcierge } from './service.js';

const SESSIONS = 10_000;
const WARM = 200;
const BATCH = 250;

/** Resident bytes per extra connection: after a warm set, then after SESSIONS more, collected both times. */
async function perConnection(target: Target, open: (i: number) => Promise<BenchSocket>): Promise<number> {
  const sockets: BenchSocket[] = [];
  const openMany = async (from: number, count: number) => {
    for (let i = from; i < from + count; i += BATCH) {
      sockets.push(
        ...(await Promise.all(Array.from({ length: Math.min(BATCH, from + count - i) }, (_, k) => open(i + k)))),
      );
    }
  };
  try {
    await openMany(0, WARM);
    const before = await target.settledRss();
    await openMany(WARM, SESSIONS);
    const after = await target.settledRss();
    return (after - before) / SESSIONS;
  } finally {
    for (const s of sockets) s.close();
  }
}

export async function bareIdleBytes(): Promise<number> {
  const target = await startTarget('bench/targets/bare-ws.ts', {}, MEASURED_MEMORY_ARGS);
  try {
    return await perConnection(target, () => BenchSocket.open(target.url.replace(/^http/, 'ws')));
  } finally {
    await target.stop();
  }
}

/** 10,000 widgets that said hello (each a conversation) and then stay idle. */
export async function serviceIdleBytes(): Promise<number> {
  const concierge = await startConcierge(() => {}, { nodeArgs: MEASURED_MEMORY_ARGS });
  try {
    const node = concierge.nodes[0]!;
    return await perConnection(node, (i) => BenchSocket.session(node.url, concierge.dep, `guest-${i}`));
  } finally {
    await concierge.stop();
  }
}
