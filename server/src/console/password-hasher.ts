import { randomBytes, timingSafeEqual } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { AppError } from '../errors.js';

/** OWASP's scrypt recommendation (128 MiB, about 275 ms here); written beside each hash so it can be raised later. */
export const PASSWORD_COST = { N: 2 ** 17, r: 8, p: 1 } as const;
type Cost = { N: number; r: number; p: number };
const KEY_BYTES = 32;
/** Sign-ins that may wait for a hashing thread; past them a sign-in gets 429 at once. */
const MAX_WAITING = 16;

/**
 * scrypt runs with `scryptSync` on threads of its own, never on libuv's pool: that pool (four
 * threads) also resolves hook host names, and a flood of sign-ins hashed there made every hook
 * call wait behind it. Plain JavaScript, so the worker needs no TypeScript loader.
 */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
parentPort.on('message', ({ password, salt, cost }) => {
  try {
    parentPort.postMessage({ key: scryptSync(password, salt, ${KEY_BYTES}, { ...cost, maxmem: 256 * cost.N * cost.r }) });
  } catch (err) {
    parentPort.postMessage({ error: String((err && err.message) || err) });
  }
});`;

interface Job {
  password: string;
  salt: Buffer;
  cost: Cost;
  resolve(key: Buffer): void;
  reject(err: Error): void;
}

/** What checking a password found: whether it matches, and whether its hash wants the current cost. */
export interface Verdict {
  matches: boolean;
  stale: boolean;
}

/**
 * Password hashing in a bounded queue: at most one hash per core at a time, {@link MAX_WAITING}
 * more waiting, and past that `429 rate_limited`, so a flood of sign-ins costs a bounded amount
 * of CPU and memory and nothing else waits behind it.
 */
export class PasswordHasher {
  readonly #idle: Worker[] = [];
  readonly #busy = new Map<Worker, Job>();
  readonly #waiting: Job[] = [];
  #decoy: Promise<string> | undefined;

  /** `threads`: hashes at once, one per core. */
  constructor(private readonly settings = { threads: availableParallelism() }) {}

  /** `scrypt$N$r$p$salt$hash`, base64url. */
  async hash(password: string): Promise<string> {
    const salt = randomBytes(16);
    const key = await this.derive(password, salt, PASSWORD_COST);
    return [
      'scrypt',
      PASSWORD_COST.N,
      PASSWORD_COST.r,
      PASSWORD_COST.p,
      salt.toString('base64url'),
      key.toString('base64url'),
    ].join('$');
  }

  /**
   * Constant-time comparison; a malformed stored value never matches. Without a stored hash (an
   * unknown email) a decoy is checked, so that costs what a wrong password costs.
   */
  async verify(password: string, stored: string | null | undefined): Promise<Verdict> {
    const [scheme, n, r, p, salt, hash] = (stored ?? (await this.decoy())).split('$');
    const cost = { N: Number(n), r: Number(r), p: Number(p) };
    if (scheme !== 'scrypt' || !salt || !hash || ![cost.N, cost.r, cost.p].every(Number.isSafeInteger))
      return { matches: false, stale: false };
    const expected = Buffer.from(hash, 'base64url');
    const key = await this.derive(password, Buffer.from(salt, 'base64url'), cost);
    const matches = stored != null && key.length === expected.length && timingSafeEqual(key, expected);
    return { matches, stale: cost.N < PASSWORD_COST.N || cost.r < PASSWORD_COST.r || cost.p < PASSWORD_COST.p };
  }

  /** Ends the threads; hashes still waiting or running are refused. */
  async stop(): Promise<void> {
    const stopping = new Error('the service is stopping');
    for (const job of this.#waiting.splice(0)) job.reject(stopping);
    const workers = [...this.#idle.splice(0), ...this.#busy.keys()];
    for (const job of this.#busy.values()) job.reject(stopping);
    this.#busy.clear();
    await Promise.all(workers.map((worker) => worker.terminate()));
  }

  /** Hashed once; a failure (a full queue) is not kept, so the next unknown email tries again. */
  private decoy(): Promise<string> {
    this.#decoy ??= this.hash(randomBytes(16).toString('hex')).catch((err: unknown) => {
      this.#decoy = undefined;
      throw err;
    });
    return this.#decoy;
  }

  private derive(password: string, salt: Buffer, cost: Cost): Promise<Buffer> {
    if (this.#busy.size >= this.settings.threads && this.#waiting.length >= MAX_WAITING) {
      return Promise.reject(
        new AppError('rate_limited', 'Too many sign-ins at once; retry after the time in Retry-After', undefined, 1),
      );
    }
    return new Promise((resolve, reject) => {
      this.#waiting.push({ password: password.normalize('NFC'), salt, cost, resolve, reject });
      this.next();
    });
  }

  private next(): void {
    while (this.#waiting.length && (this.#idle.length || this.#busy.size < this.settings.threads)) {
      const worker = this.#idle.pop() ?? this.spawn();
      const job = this.#waiting.shift()!;
      this.#busy.set(worker, job);
      worker.postMessage({ password: job.password, salt: job.salt, cost: job.cost });
    }
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    // The threads never hold the process open: a stop that forgets them still exits.
    worker.unref();
    worker.on('message', (answer: { key?: Uint8Array; error?: string }) => {
      const job = this.#busy.get(worker);
      this.#busy.delete(worker);
      this.#idle.push(worker);
      if (answer.key) job?.resolve(Buffer.from(answer.key));
      else job?.reject(new Error(`password hashing failed: ${answer.error}`));
      this.next();
    });
    worker.on('error', (err) => this.lost(worker, err));
    worker.on('exit', (code) => this.lost(worker, new Error(`a password hashing thread exited (${code})`)));
    return worker;
  }

  /** A thread that died takes its job with it; the next job starts a fresh one. */
  private lost(worker: Worker, err: Error): void {
    this.#busy.get(worker)?.reject(err);
    this.#busy.delete(worker);
    const idle = this.#idle.indexOf(worker);
    if (idle >= 0) this.#idle.splice(idle, 1);
    this.next();
  }
}
