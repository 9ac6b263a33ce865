/**
 * At most `limit` things held at once per key (sockets per client address, model calls or
 * documents being read per customer). Memory is one entry per key with something held or waited
 * for.
 */
export class PerKeyCap {
  readonly #held = new Map<string, number>();
  readonly #waiting = new Map<string, (() => void)[]>();

  constructor(readonly limit: number) {}

  /** Takes one for `key`, or undefined when it already holds `limit`; the release is safe to call twice. */
  take(key: string): (() => void) | undefined {
    const held = this.#held.get(key) ?? 0;
    if (held >= this.limit) return undefined;
    this.#held.set(key, held + 1);
    return this.#releaser(key);
  }

  /**
   * Takes one for `key`, waiting in order for a release when it holds `limit`: undefined when none
   * came within `waitMs`, when `signal` ended the wait, or at once when `maxWaiting` already wait.
   */
  async wait(
    key: string,
    waitMs: number,
    signal: AbortSignal,
    maxWaiting = Number.POSITIVE_INFINITY,
  ): Promise<(() => void) | undefined> {
    const taken = this.take(key);
    if (taken) return taken;
    const queue = this.#waiting.get(key) ?? [];
    if (queue.length >= maxWaiting || signal.aborted) return undefined;
    this.#waiting.set(key, queue);
    const placed = await new Promise<boolean>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', giveUp);
        resolve(true);
      };
      const giveUp = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', giveUp);
        queue.splice(queue.indexOf(wake), 1);
        if (!queue.length) this.#waiting.delete(key);
        resolve(false);
      };
      const timer = setTimeout(giveUp, waitMs);
      signal.addEventListener('abort', giveUp, { once: true });
      queue.push(wake);
    });
    // A released place was handed over, not given back: it is already counted as ours.
    return placed ? this.#releaser(key) : undefined;
  }

  #releaser(key: string): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#release(key);
    };
  }

  #release(key: string): void {
    const queue = this.#waiting.get(key);
    const next = queue?.shift();
    if (next) {
      if (!queue!.length) this.#waiting.delete(key);
      next();
      return;
    }
    const left = (this.#held.get(key) ?? 1) - 1;
    if (left > 0) this.#held.set(key, left);
    else this.#held.delete(key);
  }
}
