import type { Logger } from 'pino';
import { newId } from '../shared/random.js';
import { isoIn } from '../shared/time.js';
import type { Db } from '../store/database.js';
import type { Store, StoreChannel } from '../store/db.js';
import { type StoredFrame, conversationsUpdatedSince } from './conversation.repository.js';
import { type BusListener, type ConversationBus, LocalBus } from './conversation-bus.js';

const CATCH_UP_MS = 2_000;

/**
 * Many nodes on PostgreSQL: a publish reaches local sockets at once and other nodes through
 * NOTIFY after the commit. A notification lost in between is covered by a periodic catch-up
 * that asks the store which of this node's conversations changed, so a reply is late by
 * seconds at most, never lost.
 */
export class PgBus implements ConversationBus {
  private readonly local = new LocalBus();
  private readonly node = newId();
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly db: Db,
    private readonly logger: Logger,
    private channel: StoreChannel | undefined,
  ) {
    let since = isoIn(-CATCH_UP_MS);
    this.timer = setInterval(() => {
      const ids = this.local.subscribed();
      const from = since;
      since = isoIn(-CATCH_UP_MS); // overlapping windows: clock steps between nodes cost a re-read, not an event
      if (!ids.length) return;
      conversationsUpdatedSince(this.db, ids, from)
        .then((changed) => changed.forEach((id) => this.local.publish(id)))
        .catch((err) => this.logger.error({ err }, 'conversation catch-up failed'));
    }, CATCH_UP_MS);
    this.timer.unref();
  }

  static async open(db: Db, openChannel: NonNullable<Store['openChannel']>, logger: Logger): Promise<PgBus> {
    const bus = new PgBus(db, logger, undefined);
    bus.channel = await openChannel(
      (payload) => bus.onNotification(payload),
      (err) => logger.warn({ err }, 'notification channel error'),
    );
    return bus;
  }

  private onNotification(payload: string): void {
    const [node, conversationId] = payload.split(':');
    if (node !== this.node && conversationId) this.local.publish(conversationId);
  }

  publish(conversationId: string, frames?: readonly StoredFrame[]): void {
    this.local.publish(conversationId, frames);
    this.channel?.notify(`${this.node}:${conversationId}`).catch((err) => this.logger.warn({ err }, 'notify failed; catch-up will cover it'));
  }

  subscribe(conversationId: string, listener: BusListener): () => void {
    return this.local.subscribe(conversationId, listener);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.channel?.close();
    await this.local.close();
  }
}
