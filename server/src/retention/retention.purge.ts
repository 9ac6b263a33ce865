import { BackgroundLoop } from '../shared/background-loop.js';
import { isoIn } from '../shared/time.js';
import type { Db, Trx } from '../database.js';
import type { Dialect } from '../store/db.js';
import type { StoreHealth } from '../store/store-health.js';
import { deleteConversations } from '../concierge/conversations/conversation.repository.js';
import { claimExpiredConversations, deleteAged, deploymentRetentions } from './retention.repository.js';
import { purgeAudit } from '../audit/audit.repository.js';

const DAY_MS = 86_400_000;

export interface RetentionSettings {
  /** Ended conversations are kept this many days after their last change; 0 keeps them forever. */
  conversationDays: number;
  /** Delivered transcript events, and records of calls outside conversations, are kept this many days; 0 keeps them forever. */
  deliveryDays: number;
  /** Audit records are kept this many days; 0 (or absent) keeps them forever. */
  auditDays?: number;
  everyMs?: number;
  /** Rows per transaction: small, so a batch holds the store for milliseconds. */
  batch?: number;
}

/**
 * Deletes what outlived its retention (README, Configuration), in small batches, each claimed in its own
 * short transaction so that of several nodes exactly one deletes it. Open conversations are never
 * touched, however old.
 */
export class RetentionPurge {
  private readonly loop: BackgroundLoop;
  private readonly batch: number;

  /** `dialect`: on PostgreSQL claims skip rows another node holds. */
  constructor(
    private readonly parts: { db: Db; health: StoreHealth; dialect: Dialect },
    private readonly settings: RetentionSettings,
  ) {
    this.batch = settings.batch ?? 100;
    this.loop = new BackgroundLoop(
      { what: 'retention purge', pass: () => this.purge(), health: parts.health },
      { everyMs: settings.everyMs ?? 60_000 },
    );
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
  }

  /** One full pass: every batch that is due. Returns how many conversations, events, loose delivery records and audit records went. */
  async purge(): Promise<{ conversations: number; events: number; deliveries: number; audit: number }> {
    let conversations = 0;
    let events = 0;
    let deliveries = 0;
    if (this.settings.conversationDays > 0)
      conversations += await this.#purgeConversations(isoIn(-this.settings.conversationDays * DAY_MS));
    // A deployment may keep its conversations fewer days than the service (README, Privacy: what is kept).
    for (const { deploymentId, days } of await deploymentRetentions(this.parts.db))
      if (this.settings.conversationDays === 0 || days < this.settings.conversationDays)
        conversations += await this.#purgeConversations(isoIn(-days * DAY_MS), deploymentId);
    if (this.settings.deliveryDays > 0) {
      const before = isoIn(-this.settings.deliveryDays * DAY_MS);
      events = await this.inBatches((trx) =>
        deleteAged(trx, 'deliveredEvents', before, this.batch, this.parts.dialect),
      );
      deliveries = await this.inBatches((trx) =>
        deleteAged(trx, 'testDeliveries', before, this.batch, this.parts.dialect),
      );
    }
    const auditDays = this.settings.auditDays ?? 0;
    const audit =
      auditDays > 0
        ? await this.inBatches((trx) => purgeAudit(trx, isoIn(-auditDays * DAY_MS), this.batch, this.parts.dialect))
        : 0;
    return { conversations, events, deliveries, audit };
  }

  /** Deletes ended conversations (of one deployment, or all) last changed before `before`; returns how many. */
  #purgeConversations(before: string, deploymentId?: string): Promise<number> {
    return this.inBatches(async (trx) => {
      const claimed = await claimExpiredConversations(trx, before, this.batch, this.parts.dialect, deploymentId);
      await deleteConversations(trx, claimed);
      return claimed.length;
    });
  }

  /** Runs a batch delete, one short transaction each, until a batch comes back short; returns the total. */
  private async inBatches(batch: (trx: Trx) => Promise<number>): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.parts.db.transaction().execute(batch);
      total += deleted;
      if (deleted < this.batch) return total;
    }
  }
}
