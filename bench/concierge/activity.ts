import { Worker } from 'node:worker_threads';
import { quantile } from '../stats.js';
import { type Alongside, serviceThroughput, type Throughput } from './throughput.js';

export const ACTIVITY = { readers: 100, sampleEvery: 5 } as const;

interface Read {
  latencies: number[];
  messages: number;
}

/** 100 readers of the customer's activity stream, in a worker thread, while the turns run. */
const readers: Alongside<Read> = async (concierge) => {
  const worker = new Worker(new URL('../targets/activity-readers.mjs', import.meta.url), {
    workerData: {
      url: concierge.nodes[0]!.url,
      apiKey: concierge.apiKey,
      readers: ACTIVITY.readers,
      sampleEvery: ACTIVITY.sampleEvery,
    },
  });
  await new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('error', reject);
  });
  return {
    async stop() {
      const read = new Promise<Read>((resolve) => worker.once('message', resolve));
      worker.postMessage('stop');
      const result = await read;
      await worker.terminate();
      return result;
    },
  };
};

/**
 * The activity stream's fan-out: the turn throughput scenario (200 conversations) without
 * readers, then with 100 readers of the same customer, and each reader's latency from the
 * service's hub having an event to the reader having it.
 */
export async function activityFanOut(): Promise<{
  alone: Throughput;
  read: Throughput;
  p50: number;
  p99: number;
  messages: number;
}> {
  const alone = await serviceThroughput();
  const read = await serviceThroughput({ alongside: readers });
  const { latencies, messages } = read.alongside!;
  return { alone, read, p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), messages };
}
