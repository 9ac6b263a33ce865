/**
 * At most `limit` things held at once per key (sockets per client address, say). Memory is one
 * entry per key with something held.
 */
export class PerKeyCap {
  readonly #held = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** Takes one for `key`, or undefined when it already holds `limit`; the release is safe to call twice. */
  take(key: string): (() => void) | undefined {
    const held = this.#held.get(key) ?? 0;
    if (held >= this.limit) return undefined;
    this.#held.set(key, held + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#held.get(key) ?? 1) - 1;
      if (left > 0) this.#held.set(key, left);
      else this.#held.delete(key);
    };
  }
}
