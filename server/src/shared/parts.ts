/** Something the app runs or holds open: started once the server may serve, stopped when it stops. */
export interface Part {
  start?(): void | Promise<void>;
  stop?(): void | Promise<void>;
}

/**
 * The app's parts in the order they are built: started in that order, stopped in the reverse
 * one, so each stops while what it uses still runs (the server before the loops, the loops before
 * the store).
 */
export class Parts {
  readonly #parts: Part[] = [];

  /** Adds a part and returns it, so it is declared where it is built. */
  add<T extends Part>(part: T): T {
    this.#parts.push(part);
    return part;
  }

  /** Starts each part in order; if one fails, those it started are stopped again before the error is thrown. */
  async start(): Promise<void> {
    const started: Part[] = [];
    try {
      for (const part of this.#parts) {
        if (!part.start) continue;
        await part.start();
        started.push(part);
      }
    } catch (err) {
      for (const part of started.reverse()) await part.stop?.();
      throw err;
    }
  }

  async stop(): Promise<void> {
    for (const part of [...this.#parts].reverse()) await part.stop?.();
  }
}
