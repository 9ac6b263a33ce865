import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const INTERVAL_MS = 1_000;

/*
 * Runs in its own thread with its own connection. Plain JavaScript, so the worker needs no
 * TypeScript loader whichever way the service was started.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch (err) { parentPort.postMessage(String(err)); }
}, workerData.intervalMs);
parentPort.on('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
`;

/**
 * SQLite's automatic WAL checkpoint runs inside whichever commit crosses the threshold, on the
 * event loop: it copied pages and synced for milliseconds, the worst reply latencies measured.
 * This thread checkpoints every second instead (PASSIVE: it never blocks the writer), so that
 * when the serving connection's own checkpoint comes due at the WAL's cap (see `openSqlite`)
 * most pages are already copied.
 */
export class SqliteCheckpointer {
  readonly #worker: Worker;

  constructor(file: string, onError: (message: string) => void) {
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { file, driver: createRequire(import.meta.url).resolve('better-sqlite3'), intervalMs: INTERVAL_MS },
    });
    this.#worker.on('message', onError);
    this.#worker.on('error', (err) => onError(String(err)));
    this.#worker.unref();
  }

  async stop(): Promise<void> {
    const exited = new Promise<void>((resolve) => this.#worker.once('exit', () => resolve()));
    this.#worker.ref(); // keep the process up until the connection is closed
    this.#worker.postMessage('stop');
    await exited;
  }
}
