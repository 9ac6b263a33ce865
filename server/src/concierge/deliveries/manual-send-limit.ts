import { AppError } from '../../errors.js';
import { newId } from '../../shared/random.js';
import type { Db } from '../../database.js';
import { manualSendsSince } from './delivery.repository.js';

/** Test-hooks and redeliveries a deployment may send per minute, together (README, The management API): enough to debug, too few to aim the service at someone. */
export const MANUAL_SENDS_PER_MINUTE = 10;
const MINUTE_MS = 60_000;

/**
 * The per-deployment limit on what a customer sends by hand (test-hook and redeliver): each is a
 * call the service makes to a URL the customer chose. A send counts from the moment it is allowed, not from when
 * its record is stored: this node remembers the ids it allowed in the last minute and adds them to
 * the stored ones (other nodes' sends), counting an id once when it is in both. Counting only sends
 * still in flight let one slip through when another finished between the read and the check.
 */
export class ManualSendLimit {
  /** Per deployment, the sends this node allowed in the last minute: record id → when. */
  readonly #allowed = new Map<string, Map<string, number>>();

  constructor(private readonly db: Db) {}

  /** Allows one more send for the deployment and returns the id its record must carry, or throws 429 with the wait. */
  async take(deploymentId: string): Promise<string> {
    const stored = await manualSendsSince(this.db, deploymentId, new Date(Date.now() - MINUTE_MS).toISOString());
    // From here to the `set` below nothing awaits, so no other take on this node interleaves.
    const now = Date.now();
    const allowed = this.#recent(deploymentId, now);
    const times = new Map(stored.map((t) => [t.id, Date.parse(t.sentAt)]));
    for (const [id, at] of allowed) if (!times.has(id)) times.set(id, at);
    if (times.size >= MANUAL_SENDS_PER_MINUTE) {
      // Free again once the oldest send that keeps the count at the limit is a minute old.
      const sorted = [...times.values()].sort((a, b) => a - b);
      const wait = Math.max(Math.ceil((sorted[times.size - MANUAL_SENDS_PER_MINUTE]! + MINUTE_MS - now) / 1000), 1);
      throw new AppError(
        'rate_limited',
        `At most ${MANUAL_SENDS_PER_MINUTE} test-hooks and redeliveries a minute per deployment; retry after the time in Retry-After`,
        undefined,
        wait,
      );
    }
    const id = newId();
    allowed.set(id, now);
    this.#allowed.set(deploymentId, allowed);
    return id;
  }

  /** This node's sends for the deployment still inside the minute; older ones are forgotten, and so is a deployment with none. */
  #recent(deploymentId: string, now: number): Map<string, number> {
    const allowed = this.#allowed.get(deploymentId) ?? new Map<string, number>();
    for (const [id, at] of allowed) if (at <= now - MINUTE_MS) allowed.delete(id);
    if (allowed.size === 0) this.#allowed.delete(deploymentId);
    return allowed;
  }
}
