/** Keys remembered at most; past it, finished windows go first, then the oldest. */
const MAX_KEYS = 100_000;

/**
 * Counts failures per key (a client address, say) in fixed windows that start at a key's first
 * failure: a key that failed `limit` times is blocked until its window ends.
 */
export class FailureWindow {
  readonly #windows = new Map<string, { count: number; endsAt: number }>();

  constructor(
    private readonly limit: number,
    private readonly windowMs = 60_000,
  ) {}

  /** Whole seconds until `key` may be heard again; 0 when it is not blocked. */
  blockedFor(key: string, now = Date.now()): number {
    const window = this.#windows.get(key);
    if (!window || window.endsAt <= now || window.count < this.limit) return 0;
    return Math.ceil((window.endsAt - now) / 1000);
  }

  record(key: string, now = Date.now()): void {
    const window = this.#windows.get(key);
    if (window && window.endsAt > now) {
      window.count++;
      return;
    }
    if (this.#windows.size >= MAX_KEYS) this.forgetSome(now);
    this.#windows.set(key, { count: 1, endsAt: now + this.windowMs });
  }

  private forgetSome(now: number): void {
    for (const [key, window] of this.#windows) if (window.endsAt <= now) this.#windows.delete(key);
    if (this.#windows.size >= MAX_KEYS) this.#windows.delete(this.#windows.keys().next().value!);
  }
}
