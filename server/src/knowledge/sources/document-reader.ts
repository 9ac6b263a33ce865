import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { AppError, type ErrorDetail } from '../../errors.js';
import { PerKeyCap } from '../../shared/per-key-cap.js';
import type { ReadDocument, ReadJob } from './document-reading.js';

/** How documents are read (README, Answers from your documents): their bounds, per node. */
export interface DocumentReaderSettings {
  /** Reading threads at most, for every customer together. */
  threads: number;
  /** Documents one customer may have read at once; more wait their turn. */
  perCustomer: number;
  /** A document's read is cut off after this long, its thread ended, and the document refused. */
  deadlineMs: number;
  /** The JavaScript heap a reading thread may use, in MB: past it the thread ends and the document is refused. */
  heapMb: number;
}

export const DOCUMENT_READER_DEFAULTS: DocumentReaderSettings = {
  threads: 2,
  perCustomer: 2,
  deadlineMs: 10_000,
  heapMb: 256,
};

/** Documents of one customer that may wait for a place: more are refused at once (429). */
const WAITING_PER_CUSTOMER = 8;
/** How long a document waits for a place before it is refused. */
const WAIT_MS = 30_000;
/** An idle thread is ended after this long: a node reading nothing holds none. */
const IDLE_MS = 60_000;

/*
 * The thread's first lines, in plain JavaScript: from the sources (tests, `npm start`) the module
 * is TypeScript, loaded through tsx as the service itself is; compiled, it is JavaScript.
 */
const BOOT = `
const { workerData } = require('node:worker_threads');
(async () => {
  if (workerData.tsx) (await import(workerData.tsx)).register();
  await import(workerData.entry);
})().catch((err) => { console.error(err); process.exit(1); });
`;

function threadEntry(): { entry: string; tsx: string | undefined } {
  const typescript = import.meta.url.endsWith('.ts');
  const entry = new URL(`./document-reader.worker.${typescript ? 'ts' : 'js'}`, import.meta.url).href;
  const tsx = typescript
    ? pathToFileURL(
        createRequire(import.meta.url)
          .resolve('tsx/esm/api')
          .replace(/\.cjs$/, '.mjs'),
      ).href
    : undefined;
  return { entry, tsx };
}

interface Reading {
  id: number;
  done: (outcome: { read: ReadDocument } | { refused: AppError }) => void;
}

/** One reading thread, and the document it reads now. */
class ReadingThread {
  readonly worker: Worker;
  reading: Reading | undefined;
  idle: NodeJS.Timeout | undefined;
  ended = false;
  /** Resolves once the thread has loaded what it reads with; false when it ended first. */
  readonly ready: Promise<boolean>;
  #isReady: (ready: boolean) => void = () => {};

  constructor(
    heapMb: number,
    private readonly onEnd: (thread: ReadingThread) => void,
  ) {
    this.worker = new Worker(BOOT, {
      eval: true,
      workerData: threadEntry(),
      resourceLimits: { maxOldGenerationSizeMb: heapMb, maxYoungGenerationSizeMb: Math.min(64, heapMb / 4) },
      stdout: false,
      stderr: false,
    });
    this.ready = new Promise((resolve) => (this.#isReady = resolve));
    this.worker.on('message', (message: { id: number; read?: ReadDocument; refused?: RefusalData; ready?: true }) => {
      if (message.ready) return this.#isReady(true);
      const reading = this.reading;
      if (!reading || reading.id !== message.id) return;
      this.reading = undefined;
      reading.done(message.read ? { read: message.read } : { refused: refusalOf(message.refused!) });
    });
    this.worker.on('error', (err: NodeJS.ErrnoException) =>
      this.#end(
        err.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? unreadable(`reading it needed more than ${heapMb} MB`)
          : unreadable('its reader stopped'),
      ),
    );
    this.worker.on('exit', () => this.#end(unreadable('its reader stopped')));
  }

  /** Ends the thread now, whatever it is doing: its memory goes with it. */
  kill(): void {
    this.#end(undefined);
    void this.worker.terminate();
  }

  #end(why: AppError | undefined): void {
    if (this.ended) return;
    this.ended = true;
    this.#isReady(false);
    clearTimeout(this.idle);
    const reading = this.reading;
    this.reading = undefined;
    if (reading && why) reading.done({ refused: why });
    this.onEnd(this);
  }
}

interface RefusalData {
  code: 'invalid_request';
  message: string;
  details?: ErrorDetail[];
}

const refusalOf = (data: RefusalData) => new AppError(data.code, data.message, data.details);
const unreadable = (why: string) =>
  new AppError('invalid_request', 'The document could not be read', [{ path: 'document', message: why }]);

/**
 * Reads what customers and the pages they name supply (README, Answers from your documents) in
 * threads of its own, never on the event loop that serves every customer: each thread has a heap
 * limit, each document a deadline after which its thread is ended and the document refused in
 * plain words, and each customer at most `perCustomer` documents read at once on this node.
 */
export class DocumentReader {
  readonly #idle: ReadingThread[] = [];
  readonly #busy = new Set<ReadingThread>();
  readonly #perCustomer: PerKeyCap;
  readonly #threads: PerKeyCap;
  #next = 0;
  #stopped = false;

  constructor(private readonly settings: DocumentReaderSettings = DOCUMENT_READER_DEFAULTS) {
    this.#perCustomer = new PerKeyCap(settings.perCustomer);
    this.#threads = new PerKeyCap(settings.threads);
  }

  /** Reads `job` for `customerId`: its passages, or the refusal (`invalid_request`, or `rate_limited` past the waiting line). */
  async read(customerId: string, job: ReadJob): Promise<ReadDocument> {
    const never = new AbortController().signal;
    const customerPlace = await this.#perCustomer.wait(customerId, WAIT_MS, never, WAITING_PER_CUSTOMER);
    if (!customerPlace)
      throw new AppError(
        'rate_limited',
        `At most ${this.settings.perCustomer} of your documents are read at once; retry after the time in Retry-After`,
        undefined,
        5,
      );
    try {
      const threadPlace = await this.#threads.wait('all', WAIT_MS, never);
      if (!threadPlace)
        throw new AppError('rate_limited', 'Documents are being read for others; retry shortly', undefined, 5);
      try {
        return await this.#readIn(this.#thread(), job);
      } finally {
        threadPlace();
      }
    } finally {
      customerPlace();
    }
  }

  async #readIn(thread: ReadingThread, job: ReadJob): Promise<ReadDocument> {
    if (this.#stopped) throw new AppError('unavailable', 'The service is stopping; retry shortly', undefined, 1);
    // A new thread's start is not the document's: its deadline counts from when the thread can read.
    if (!(await thread.ready)) throw unreadable('its reader stopped');
    const bytes = 'bytes' in job.source ? job.source.bytes : undefined;
    // The thread gets its own copy of the bytes: a Buffer may share its memory with others.
    const sent = bytes ? { ...job, source: { bytes: new Uint8Array(bytes) } } : job;
    const outcome = await new Promise<{ read: ReadDocument } | { refused: AppError }>((resolve) => {
      const id = ++this.#next;
      const deadline = setTimeout(() => {
        thread.reading = undefined;
        thread.kill();
        resolve({ refused: unreadable(`reading it took longer than ${this.settings.deadlineMs / 1000} s`) });
      }, this.settings.deadlineMs);
      thread.reading = {
        id,
        done: (result) => {
          clearTimeout(deadline);
          resolve(result);
        },
      };
      const transfer = 'bytes' in sent.source ? [sent.source.bytes.buffer as ArrayBuffer] : [];
      thread.worker.postMessage({ id, job: sent }, transfer);
    });
    this.#release(thread);
    if ('refused' in outcome) throw outcome.refused;
    return outcome.read;
  }

  #thread(): ReadingThread {
    const idle = this.#idle.pop();
    if (idle) {
      clearTimeout(idle.idle);
      idle.worker.ref();
      this.#busy.add(idle);
      return idle;
    }
    const thread = new ReadingThread(this.settings.heapMb, (ended) => {
      this.#busy.delete(ended);
      const at = this.#idle.indexOf(ended);
      if (at >= 0) this.#idle.splice(at, 1);
    });
    this.#busy.add(thread);
    return thread;
  }

  /** A thread that read its document waits for the next, unreferenced, until it has been idle a while. */
  #release(thread: ReadingThread): void {
    this.#busy.delete(thread);
    if (thread.ended || this.#stopped) {
      thread.kill();
      return;
    }
    thread.worker.unref();
    thread.idle = setTimeout(() => thread.kill(), IDLE_MS);
    thread.idle.unref();
    this.#idle.push(thread);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    const all = [...this.#idle, ...this.#busy];
    this.#idle.length = 0;
    await Promise.all(all.map((thread) => thread.worker.terminate()));
  }
}
