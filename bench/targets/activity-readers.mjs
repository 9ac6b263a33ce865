import { parentPort, workerData } from 'node:worker_threads';

/**
 * The activity scenario's readers (bench/concierge/activity.ts), plain JavaScript because a worker
 * thread does not take tsx's loader on Node 20. A thread of its own, so reading does not slow the
 * bench's drivers: `readers` streams of GET /api/v1/activity. They count messages on the raw bytes
 * (no decoding: the readers share this machine's two cores with the service), and time the first
 * message of every `sampleEvery`-th chunk from the moment the service's hub had it (the time in
 * its `id:`) to the moment the reader got it: the oldest message of a chunk, so the worst of it.
 */
const { url, apiKey, readers, sampleEvery } = workerData;
const stop = new AbortController();
const latencies = [];
const ID = Buffer.from('id: ');
let messages = 0;
let connected = 0;

async function read() {
  const res = await fetch(`${url}/api/v1/activity`, {
    headers: { authorization: `Bearer ${apiKey}` },
    signal: stop.signal,
  });
  if (res.status !== 200) throw new Error(`activity: ${res.status}`);
  if (++connected === readers) parentPort.postMessage('open');
  let chunks = 0;
  try {
    for await (const bytes of res.body) {
      const now = Date.now();
      const chunk = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      let at = chunk.indexOf(ID);
      if (at >= 0 && chunks++ % sampleEvery === 0)
        latencies.push(now - Number(chunk.toString('latin1', at + 4, chunk.indexOf(45, at + 4))));
      for (; at >= 0; at = chunk.indexOf(ID, at + 4)) messages++;
    }
  } catch {
    // stopped
  }
}

const reading = Array.from({ length: readers }, read);
parentPort.once('message', async () => {
  stop.abort();
  await Promise.allSettled(reading);
  parentPort.postMessage({ latencies, messages });
});
