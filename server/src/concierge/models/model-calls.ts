/**
 * At most `limit` model calls in flight per customer on this node (MODEL_CONCURRENCY): past it a
 * turn waits for a place, in order, for as long as its caller lets it.
 */
export class ModelCalls {
  readonly #held = new Map<string, number>();
  readonly #waiting = new Map<string, (() => void)[]>();

  constructor(readonly limit: number) {}

  /** A place for `customer`'s call, or undefined when none came within `waitMs` (or `signal` ended the wait). */
  async take(customer: string, waitMs: number, signal: AbortSignal): Promise<(() => void) | undefined> {
    if ((this.#held.get(customer) ?? 0) >= this.limit) {
      const queue = this.#waiting.get(customer) ?? [];
      this.#waiting.set(customer, queue);
      const placed = await new Promise<boolean>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', giveUp);
          resolve(true);
        };
        const giveUp = () => {
          clearTimeout(timer);
          queue.splice(queue.indexOf(wake), 1);
          if (!queue.length) this.#waiting.delete(customer);
          resolve(false);
        };
        const timer = setTimeout(giveUp, waitMs);
        signal.addEventListener('abort', giveUp, { once: true });
        queue.push(wake);
      });
      // A released place was handed over, not given back: it is already counted as ours.
      if (!placed) return undefined;
    } else this.#held.set(customer, (this.#held.get(customer) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#release(customer);
    };
  }

  #release(customer: string): void {
    const next = this.#waiting.get(customer)?.shift();
    if (next) {
      if (!this.#waiting.get(customer)!.length) this.#waiting.delete(customer);
      next();
      return;
    }
    const left = (this.#held.get(customer) ?? 1) - 1;
    if (left > 0) this.#held.set(customer, left);
    else this.#held.delete(customer);
  }
}
