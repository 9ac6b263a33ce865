import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { isoIn, isoNow } from '../shared/time.js';
import type { Db } from '../store/database.js';
import type { StoreHealth } from '../store/store-health.js';
import { claimOutboxHeads, settleOutbox } from './conversation.repository.js';
import type { TranscriptOutboxTable } from './conversation.table.js';
import type { DeploymentDirectory } from './deployment-context.js';
import { type EgressPolicy, postJson } from './egress.js';
import { signatureOf } from './signature.js';

const LEASE_MS = 30_000;
const MAX_BACKOFF_MS = 3_600_000;
const GIVE_UP_AFTER_MS = 24 * 3_600_000;
const TIMEOUT_MS = 10_000;

/** 1 s after the first failure, doubling, capped at an hour. */
export const backoffMs = (attempts: number): number => Math.min(1000 * 2 ** Math.max(attempts - 1, 0), MAX_BACKOFF_MS);

/**
 * Delivers stored transcript events at least once, in order per conversation: a conversation's
 * next event waits until the one before it is delivered. Each pass leases the due heads of the
 * conversations' queues (see {@link claimOutboxHeads}), so of several nodes exactly one sends a
 * given event at a time.
 */
export class TranscriptOutbox {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private readonly stopping = new AbortController();

  constructor(
    private readonly db: Db,
    private readonly deployments: DeploymentDirectory,
    private readonly egress: EgressPolicy,
    private readonly logger: Logger,
    private readonly health: StoreHealth,
    private readonly skipLocked: boolean,
    private readonly intervalMs = 1_000,
  ) {
    // Every delivery in flight listens to it (up to a pass of 200 at once).
    setMaxListeners(0, this.stopping.signal);
  }

  start(): void {
    this.timer = setInterval(() => this.poke(), this.intervalMs);
    this.timer.unref();
  }

  /** Runs a pass now, or right after the running one (called after commits that add events). */
  poke(): void {
    if (this.stopping.signal.aborted) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.deliverDue()
      .catch((err) => void this.health.failed(err, 'transcript delivery'))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.poke();
        }
      });
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    clearInterval(this.timer);
    await this.running;
  }

  /** Delivers due events until none is left that may go now. */
  async deliverDue(): Promise<void> {
    for (;;) {
      const heads = await claimOutboxHeads(this.db, isoNow(), isoIn(LEASE_MS), 200, this.skipLocked);
      const delivered = await Promise.all(heads.map((row) => this.deliver(row)));
      // A delivered head lets its conversation's next event go at once.
      if (this.stopping.signal.aborted || !delivered.includes(true)) return;
    }
  }

  /** True when delivered. */
  private async deliver(row: TranscriptOutboxTable): Promise<boolean> {
    const dep = await this.deployments.get(row.deployment_id);
    let delivered = false;
    if (dep) {
      try {
        // A stop cuts a delivery short: the event stays pending and is sent again later.
        const headers = { 'X-Service-Signature': signatureOf(dep.signingSecret, row.body), 'X-Service-Event-Id': row.id };
        const res = await postJson(row.url, row.body, headers, TIMEOUT_MS, this.egress, this.stopping.signal);
        delivered = res.status >= 200 && res.status < 300;
      } catch {
        delivered = false;
      }
    }
    const attempts = row.attempts + 1;
    const expired = Date.now() - Date.parse(row.created_at) > GIVE_UP_AFTER_MS;
    // Kept through a store outage: an unsettled event would be sent again when its lease ends.
    const settle = () =>
      settleOutbox(this.db, row.id, {
        status: delivered ? 'delivered' : expired || !dep ? 'dead' : 'pending',
        attempts,
        next_attempt_at: isoIn(backoffMs(attempts)),
      });
    await this.health.persist('settling a transcript event', settle, this.stopping.signal);
    if (!delivered && expired) this.logger.warn({ event_id: row.id, deployment_id: row.deployment_id }, 'transcript event given up after 24 h');
    return delivered;
  }
}
