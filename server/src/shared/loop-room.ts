import { performance, type EventLoopUtilization } from 'node:perf_hooks';

/**
 * Room on the event loop for background work (a conversation's analysis): `wait` returns once the
 * loop has been busy less than `maxUtilization` of the time since the last look, pausing
 * `pauseMs` at a time until then, so work a visitor waits for (a turn, a reply) goes first; and
 * after `maxWaitMs` whatever the loop does, so the background work is never starved.
 */
export class LoopRoom {
  #last: EventLoopUtilization = performance.eventLoopUtilization();

  constructor(private readonly settings: { maxUtilization: number; pauseMs: number; maxWaitMs: number }) {}

  async wait(signal?: AbortSignal): Promise<void> {
    const until = performance.now() + this.settings.maxWaitMs;
    for (;;) {
      const now = performance.eventLoopUtilization();
      const recent = performance.eventLoopUtilization(now, this.#last);
      this.#last = now;
      if (recent.utilization < this.settings.maxUtilization || signal?.aborted || performance.now() >= until) return;
      await new Promise((resolve) => setTimeout(resolve, this.settings.pauseMs));
    }
  }
}
