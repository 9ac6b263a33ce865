import { TtlCache } from './ttl-cache.js';

/**
 * Counts failures per key (a client address, say) in fixed windows that start at a key's first
 * failure: a key that failed `limit` times is blocked until its window ends. Windows live in a
 * {@link TtlCache}, so memory stays bounded however many addresses fail.
 */
export class FailureWindow {
  readonly #windows: TtlCache<{ count: number; endsAt: number }>;

  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
  ) {
    this.#windows = new TtlCache(windowMs);
  }

  /** Whole seconds until `key` may be heard again; 0 when it is not blocked. */
  blockedFor(key: string, now = Date.now()): number {
    const window = this.#windows.get(key, now);
    return window && window.count >= this.limit ? Math.ceil((window.endsAt - now) / 1000) : 0;
  }

  record(key: string, now = Date.now()): void {
    const window = this.#windows.get(key, now);
    if (window) window.count++;
    else this.#windows.set(key, { count: 1, endsAt: now + this.windowMs }, now);
  }
}
