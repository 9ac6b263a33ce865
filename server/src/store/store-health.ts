import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { AppError } from '../errors.js';

/** Node's socket errors that mean the database server could not be reached or went away. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ECONNABORTED',
]);
/** PostgreSQL: admin shutdown, crash shutdown, cannot connect now, too many connections, disk full, out of memory. */
const PG_CODES = new Set(['57P01', '57P02', '57P03', '53300', '53100', '53200']);
/** SQLite: another process holds the file too long, or the disk refuses (full, I/O error, gone). */
const SQLITE_CODE = /^SQLITE_(BUSY|FULL|IOERR|CANTOPEN)/;
/** pg's own messages for a connection that died or never came. */
const PG_CLIENT_MESSAGE =
  /^Connection terminated|timeout exceeded when trying to connect|is not queryable|not currently accepting connections/;

/**
 * True for errors that say "the store cannot be reached right now" (a restart, a failover, a
 * network cut, a full disk), as opposed to a bug or a refused statement: those become
 * `503 unavailable` and are retried, never reported as internal errors.
 */
export function isStoreUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code) || PG_CODES.has(code) || code.startsWith('08') || SQLITE_CODE.test(code)) return true;
  }
  if (PG_CLIENT_MESSAGE.test(err.message)) return true;
  // Happy Eyeballs reports each address it tried.
  return err instanceof AggregateError && err.errors.some(isStoreUnavailable);
}

/**
 * A request that met an outage: reported to `health` (which logs an outage once, not once per
 * request) and answered `503 unavailable`, which the client may retry (README, The management API).
 */
export const storeOutage =
  (health: StoreHealth) =>
  (err: unknown, where: string): AppError | undefined => {
    if (!isStoreUnavailable(err)) return undefined;
    health.failed(err, where);
    return new AppError('unavailable', 'The store cannot be reached right now; nothing was changed. Retry shortly.');
  };

const PROBE_MS = 500;
const RETRY_FIRST_MS = 100;
/** Retries back off to this and no further, so a change is retried within 2 s of the store's return. */
const RETRY_MAX_MS = 2_000;

/**
 * Knows whether the store is reachable, from the failures the rest of the service meets. An
 * outage is logged once when it starts; from then on the store is probed until it answers, and
 * its return is logged once. Every part that touches the store reports its failures here
 * instead of logging each one: during an outage that would be a line per request and per tick.
 */
export class StoreHealth {
  #down = false;
  #probe: NodeJS.Timeout | undefined;
  #probing = false;
  #closed = false;

  /** `ping`: a cheap query that tells whether the store answers. */
  constructor(private readonly parts: { ping: () => Promise<void>; logger: Logger }) {}

  get down(): boolean {
    return this.#down;
  }

  /**
   * Reports a failure met while doing `what`: an outage is noted (and logged if it is new),
   * anything else is logged as the error it is. Returns whether it was an outage.
   */
  failed(err: unknown, what: string): boolean {
    if (!isStoreUnavailable(err)) {
      this.parts.logger.error({ err }, `${what} failed`);
      return false;
    }
    if (!this.#down && !this.#closed) {
      this.#down = true;
      this.parts.logger.error(
        { err: { code: (err as { code?: unknown }).code, message: (err as Error).message }, during: what },
        'store unavailable; retrying until it answers',
      );
      this.#probe = setInterval(() => void this.probe(), PROBE_MS);
      this.#probe.unref();
    }
    return true;
  }

  /**
   * Runs a state change that must not be lost: while the store is unreachable it is retried,
   * backing off to {@link RETRY_MAX_MS}, until it commits or `signal` aborts (a shutdown, which
   * leaves it to the next start). Any other error is thrown at once. `work` must be safe to run
   * again after a failed commit: each of ours is conditional on the state it moves from.
   */
  async persist<T>(what: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    for (let delay = RETRY_FIRST_MS; ; delay = Math.min(delay * 2, RETRY_MAX_MS)) {
      try {
        return await work();
      } catch (err) {
        if (signal?.aborted || !isStoreUnavailable(err)) throw err;
        this.failed(err, what);
        await sleep(delay, undefined, { signal, ref: false }).catch(() => {
          throw err;
        });
      }
    }
  }

  close(): void {
    this.#closed = true;
    clearInterval(this.#probe);
  }

  private async probe(): Promise<void> {
    if (this.#probing) return;
    this.#probing = true;
    try {
      await this.parts.ping();
    } catch {
      return;
    } finally {
      this.#probing = false;
    }
    if (!this.#down) return;
    this.#down = false;
    clearInterval(this.#probe);
    this.parts.logger.warn('store reachable again');
  }
}
