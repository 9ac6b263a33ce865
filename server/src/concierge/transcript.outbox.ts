import type { Logger } from 'pino';
import { isoIn, isoNow } from '../shared/time.js';
import type { Db } from '../store/database.js';
import { loadDeploymentContext } from './deployment-context.js';
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
 * next event waits until the one before it is delivered. Rows are claimed with a conditional
 * lease update, so of several nodes exactly one sends a given event at a time.
 */
export class TranscriptOutbox {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly db: Db,
    private readonly egress: EgressPolicy,
    private readonly logger: Logger,
    private readonly intervalMs = 1_000,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.poke(), this.intervalMs);
    this.timer.unref();
  }

  /** Runs a pass now unless one is running (called after commits that add events). */
  poke(): void {
    if (this.running || this.stopped) return;
    this.running = this.deliverDue()
      .catch((err) => this.logger.error({ err }, 'transcript delivery pass failed'))
      .finally(() => (this.running = undefined));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.running;
  }

  async deliverDue(): Promise<void> {
    const rows = await this.db
      .selectFrom('transcript_outbox')
      .selectAll()
      .where('status', '=', 'pending')
      .orderBy('conversation_id')
      .orderBy('position')
      .orderBy('created_at')
      .limit(500)
      .execute();
    const byConversation = new Map<string, typeof rows>();
    for (const row of rows) {
      const queue = byConversation.get(row.conversation_id);
      if (queue) queue.push(row);
      else byConversation.set(row.conversation_id, [row]);
    }
    await Promise.all(
      [...byConversation.values()].map(async (queue) => {
        for (const row of queue) {
          if (row.next_attempt_at > isoNow()) return;
          if (!(await this.deliver(row))) return;
        }
      }),
    );
  }

  /** True when delivered (the conversation's next event may go). */
  private async deliver(row: { id: string; deployment_id: string; url: string; body: string; attempts: number; created_at: string }): Promise<boolean> {
    const now = isoNow();
    const claimed = await this.db
      .updateTable('transcript_outbox')
      .set({ lease_expires_at: isoIn(LEASE_MS) })
      .where('id', '=', row.id)
      .where('status', '=', 'pending')
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) return false;
    const dep = await loadDeploymentContext(this.db, row.deployment_id);
    let delivered = false;
    if (dep) {
      try {
        const res = await postJson(row.url, row.body, { 'X-Service-Signature': signatureOf(dep.signingSecret, row.body), 'X-Service-Event-Id': row.id }, TIMEOUT_MS, this.egress);
        delivered = res.status >= 200 && res.status < 300;
      } catch {
        delivered = false;
      }
    }
    const attempts = row.attempts + 1;
    const expired = Date.now() - Date.parse(row.created_at) > GIVE_UP_AFTER_MS;
    await this.db
      .updateTable('transcript_outbox')
      .set({
        status: delivered ? 'delivered' : expired || !dep ? 'dead' : 'pending',
        attempts,
        next_attempt_at: isoIn(backoffMs(attempts)),
        lease_expires_at: null,
      })
      .where('id', '=', row.id)
      .execute();
    if (!delivered && expired) this.logger.warn({ event_id: row.id, deployment_id: row.deployment_id }, 'transcript event given up after 24 h');
    return delivered;
  }
}
