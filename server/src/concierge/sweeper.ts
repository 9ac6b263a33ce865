import type { StoreHealth } from '../store/store-health.js';
import type { Concierge } from './concierge.js';

/** Runs the turn expiry sweep every `intervalMs` until stopped. */
export class Sweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly concierge: Concierge,
    private readonly health: StoreHealth,
    private readonly intervalMs = 1_000,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      this.running = this.concierge
        .sweep()
        .then(() => undefined)
        .catch((err) => void this.health.failed(err, 'turn sweep'))
        .finally(() => (this.running = undefined));
    }, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }
}
