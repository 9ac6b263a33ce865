import type { StoreHealth } from '../store/store-health.js';

/**
 * A pass of background work run every `everyMs` and whenever asked ({@link run}), never two at
 * once: asked while a pass runs, it runs once more right after, however often it was asked. A
 * failing pass is reported to {@link StoreHealth} (an outage is logged once, not every tick) and
 * the loop goes on.
 */
export class BackgroundLoop {
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #queued: Promise<void> | undefined;
  #stopped = false;

  /** `what`: the pass as the log names it when it fails. */
  constructor(
    private readonly parts: { what: string; pass: () => Promise<unknown>; health: StoreHealth },
    private readonly settings: { everyMs: number },
  ) {}

  start(): void {
    this.#stopped = false;
    this.#timer = setInterval(() => void this.run(), this.settings.everyMs);
    this.#timer.unref();
  }

  /** Runs a pass now, or right after the one running; resolves when that pass ends. Never rejects. */
  run(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (!this.#running) {
      this.#running = this.once().finally(() => (this.#running = undefined));
      return this.#running;
    }
    this.#queued ??= this.#running.then(() => {
      this.#queued = undefined;
      return this.run();
    });
    return this.#queued;
  }

  /** No pass starts from now on; resolves when the one running (and any queued) has ended. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    const last = this.#queued ?? this.#running;
    this.#stopped = true;
    await last;
  }

  private async once(): Promise<void> {
    try {
      await this.parts.pass();
    } catch (err) {
      this.parts.health.failed(err, this.parts.what);
    }
  }
}
