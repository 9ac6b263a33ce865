import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import { BackgroundLoop } from '../../shared/background-loop.js';
import { isoIn, isoNow } from '../../shared/time.js';
import type { Db } from '../../database.js';
import type { Dialect } from '../../store/db.js';
import type { StoreHealth } from '../../store/store-health.js';
import type { DeploymentContext, DeploymentDirectory } from '../../deployments/deployment-context.js';
import { type DeliverySubject, deliveryRow } from './delivery.record.js';
import { insertDeliveries, transcriptSucceededSince } from './delivery.repository.js';
import { disableTranscriptTarget } from '../../deployments/deployment.repository.js';
import { auditEntry, auditOf } from '../../audit/audit-trail.js';
import { type EgressPolicy, egressFor, type EgressResponse, type Exchange, exchange } from '../../shared/egress.js';
import { signatureOf, standardWebhookHeaders } from '../signature.js';
import { claimOutboxHeads, headsDueNow, settleOutbox } from './outbox.repository.js';
import type { TranscriptOutboxTable } from './outbox.table.js';

const LEASE_MS = 30_000;
const MAX_BACKOFF_MS = 3_600_000;
/** The Standard Webhooks horizon: an event still failing after this is dead, and a target that failed all along is disabled. */
const GIVE_UP_AFTER_MS = 72 * 3_600_000;
/** How long a transcript receiver may take to answer. */
export const TRANSCRIPT_TIMEOUT_MS = 10_000;

/**
 * When to try again after `attempts` failures: 1 s after the first, doubling, capped at an hour,
 * each ±20% at random so that a receiver coming back is not met by every node's retries at once.
 * A receiver's `Retry-After` (on 429 or 503, capped at an hour) wins.
 */
export function retryDelayMs(attempts: number, res?: EgressResponse): number {
  const asked =
    res && (res.status === 429 || res.status === 503) ? retryAfterMs(res.headers['retry-after']) : undefined;
  if (asked !== undefined) return Math.min(asked, MAX_BACKOFF_MS);
  return Math.min(1000 * 2 ** Math.max(attempts - 1, 0), MAX_BACKOFF_MS) * (0.8 + 0.4 * Math.random());
}

/** `Retry-After` as seconds or an HTTP date; undefined when absent or unreadable. */
function retryAfterMs(value: string | undefined): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(at - Date.now(), 0);
}

export interface TranscriptOutboxParts {
  db: Db;
  deployments: DeploymentDirectory;
  egress: EgressPolicy;
  logger: Logger;
  health: StoreHealth;
  /** PostgreSQL: heads another node is claiming are skipped, and a settle locks the conversation's row. */
  dialect: Dialect;
}

/**
 * Delivers stored transcript events at least once, in order per conversation: a conversation's
 * next event waits until the one before it is delivered. Each pass leases the due heads of the
 * conversations' queues (see {@link claimOutboxHeads}), so of several nodes exactly one sends a
 * given event at a time.
 */
export class TranscriptOutbox {
  private readonly stopping = new AbortController();
  private readonly loop: BackgroundLoop;

  constructor(
    private readonly parts: TranscriptOutboxParts,
    settings: { intervalMs: number },
  ) {
    // Every delivery in flight listens to it (up to a pass of 200 at once).
    setMaxListeners(0, this.stopping.signal);
    this.loop = new BackgroundLoop(
      { what: 'transcript delivery', pass: () => this.deliverDue(), health: parts.health },
      { everyMs: settings.intervalMs },
    );
  }

  start(): void {
    this.loop.start();
  }

  /** Runs a pass now, or right after the running one (called after commits that add events). */
  poke(): void {
    void this.loop.run();
  }

  /** A deployment's target was enabled again: its waiting events go now, in order. */
  async resume(deploymentId: string): Promise<void> {
    await headsDueNow(this.parts.db, deploymentId, isoNow());
    this.poke();
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop.stop();
  }

  /** Delivers due events until none is left that may go now. */
  async deliverDue(): Promise<void> {
    for (;;) {
      const heads = await claimOutboxHeads(this.parts.db, isoNow(), isoIn(LEASE_MS), 200, this.parts.dialect);
      const delivered = await Promise.all(heads.map((row) => this.deliver(row)));
      // A delivered head lets its conversation's next event go at once.
      if (this.stopping.signal.aborted || !delivered.includes(true)) return;
    }
  }

  /**
   * True when delivered. Each attempt goes to the deployment's transcript URL as it is now (a
   * customer who fixed a wrong URL is not retried at the old one); with none left, the event is dead.
   */
  private async deliver(row: TranscriptOutboxTable): Promise<boolean> {
    const dep = await this.parts.deployments.get(row.deployment_id);
    const url = dep?.hook.transcriptUrl;
    // A stop cuts a delivery short: the event stays pending and is sent again later.
    const sent =
      dep && url
        ? await sendTranscriptEvent(
            dep,
            url,
            row.id,
            row.body,
            TRANSCRIPT_TIMEOUT_MS,
            this.parts.egress,
            this.stopping.signal,
          )
        : undefined;
    if (sent?.error?.kind === 'egress_refused')
      this.parts.logger.warn(
        { event_id: row.id, deployment_id: row.deployment_id, cause: sent.error.message },
        'transcript target refused',
      );
    const res = sent?.response;
    // Any 2xx; a 3xx is a failure (redirects are never followed).
    const delivered = res !== undefined && res.status >= 200 && res.status < 300;
    const attempts = row.attempts + 1;
    // A receiver that says it is gone is not asked again: the event waits, with the rest, for the target to be enabled.
    const gone = res?.status === 410;
    const expired = !delivered && !gone && Date.now() - Date.parse(row.created_at) > GIVE_UP_AFTER_MS;
    const settled = {
      status: delivered ? 'delivered' : expired || !url ? 'dead' : 'pending',
      attempts,
      next_attempt_at: isoIn(retryDelayMs(attempts, res)),
    } as const;
    const record =
      sent && dep ? deliveryRow(transcriptSubject(dep.customerId, row, attempts, 'transcript'), sent) : undefined;
    // Settled with the record of its attempt in one transaction, kept through a store outage (an
    // unsettled event would be sent again when its lease ends); an event erased meanwhile keeps nothing.
    const settle = () =>
      this.parts.db.transaction().execute(async (trx) => {
        if ((await settleOutbox(trx, row, settled, this.parts.dialect)) && record)
          await insertDeliveries(trx, [record]);
      });
    await this.parts.health.persist('settling a transcript event', settle, this.stopping.signal);
    if (expired)
      this.parts.logger.warn(
        { event_id: row.id, deployment_id: row.deployment_id },
        'transcript event given up after 72 h',
      );
    if (
      dep &&
      url &&
      (gone ||
        (expired && !(await transcriptSucceededSince(this.parts.db, dep.customerId, dep.id, isoIn(-GIVE_UP_AFTER_MS)))))
    ) {
      await this.disable(dep, gone ? `410 Gone from ${url}` : `every attempt to ${url} failed for 72 h`);
    }
    return delivered;
  }

  /** The service's own change, recorded in the audit log as the service's with it. */
  private async disable(dep: { id: string; customerId: string }, reason: string): Promise<void> {
    const disabled = await this.parts.db.transaction().execute(async (trx) => {
      if (!(await disableTranscriptTarget(trx, dep.id, isoNow(), reason))) return false;
      const entry = auditEntry('deployment.transcript_hook_disabled', dep.id, { changes: ['transcript_hook_status'] });
      await auditOf(dep.customerId, 'service')(trx, entry);
      return true;
    });
    if (disabled)
      this.parts.logger.warn({ deployment_id: dep.id, reason }, 'transcript target disabled until enabled again');
  }
}

/** Signs and sends one transcript event's body, as stored. */
export function sendTranscriptEvent(
  dep: DeploymentContext,
  url: string,
  eventId: string,
  body: string,
  timeoutMs: number,
  egress: EgressPolicy,
  signal?: AbortSignal,
): Promise<Exchange> {
  const headers = {
    'X-Service-Signature': signatureOf(dep.signing.current, body),
    'X-Service-Event-Id': eventId,
    ...standardWebhookHeaders(eventId, body, dep.signing.secrets),
  };
  return exchange(url, body, headers, timeoutMs, egressFor(egress, 'hooks', dep.customerId), signal);
}

/** What a transcript event's delivery record is about. */
export function transcriptSubject(
  customerId: string,
  event: Pick<TranscriptOutboxTable, 'id' | 'deployment_id' | 'conversation_id' | 'body'>,
  attempt: number,
  kind: 'transcript' | 'test',
): DeliverySubject {
  const { type } = JSON.parse(event.body) as { type: string };
  return {
    kind,
    customerId,
    deploymentId: event.deployment_id,
    conversationId: kind === 'test' ? null : event.conversation_id,
    turnId: null,
    eventId: event.id,
    eventType: type,
    attempt,
  };
}
