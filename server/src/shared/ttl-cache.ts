/**
 * Remembers values for `ttlMs`, holding at most `capacity` (the oldest entry goes first).
 * For per-node read caches where another node's change may be seen `ttlMs` late.
 */
export class TtlCache<V> {
  readonly #entries = new Map<string, { value: V; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly capacity = 10_000,
  ) {}

  get(key: string, now = Date.now()): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.until > now) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  set(key: string, value: V, now = Date.now()): void {
    this.#entries.delete(key);
    if (this.#entries.size >= this.capacity) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, { value, until: now + this.ttlMs });
  }

  delete(key: string): void {
    this.#entries.delete(key);
  }

  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, entry] of this.#entries) if (matches(entry.value)) this.#entries.delete(key);
  }
}
