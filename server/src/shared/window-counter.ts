import { TtlCache } from './ttl-cache.js';

/**
 * Counts events per key (a client address, an API key) in fixed windows that start at a key's
 * first event: a key that reached `limit` is blocked until its window ends. Windows live in a
 * {@link TtlCache}, so memory stays bounded however many keys there are.
 */
export class WindowCounter {
  readonly #windows: TtlCache<{ count: number; endsAt: number }>;

  constructor(
    private readonly limit: number,
    readonly windowMs = 60_000,
  ) {
    this.#windows = new TtlCache(windowMs);
  }

  /** Whole seconds until `key` may be heard again; 0 when it is not blocked. */
  blockedFor(key: string, now = Date.now()): number {
    const window = this.#windows.get(key, now);
    return window && window.count >= this.limit ? Math.ceil((window.endsAt - now) / 1000) : 0;
  }

  /**
   * Counts one failure for `key` and says whether it came while the key was already blocked: the
   * whole seconds left (for `Retry-After`), or 0 when this one is still within the limit.
   */
  refuse(key: string, now = Date.now()): number {
    const blocked = this.blockedFor(key, now);
    this.record(key, now);
    return blocked;
  }

  /** Counts `amount` (one by default) for `key` and says where its window stands: `count` includes this. */
  record(key: string, now = Date.now(), amount = 1): { count: number; endsAt: number } {
    const window = this.#windows.get(key, now);
    if (window) {
      window.count += amount;
      return window;
    }
    const fresh = { count: amount, endsAt: now + this.windowMs };
    this.#windows.set(key, fresh, now);
    return fresh;
  }
}
