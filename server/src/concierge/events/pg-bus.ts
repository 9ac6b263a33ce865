import type { Logger } from 'pino';
import { BackgroundLoop } from '../../shared/background-loop.js';
import { newId } from '../../shared/random.js';
import { isoIn } from '../../shared/time.js';
import type { Db } from '../../database.js';
import type { Store, StoreChannel } from '../../store/db.js';
import type { StoreHealth } from '../../store/store-health.js';
import { conversationsUpdatedSince, type StoredFrame } from './event.repository.js';
import { type BusListener, type ConversationBus, LocalBus } from './conversation-bus.js';

const CATCH_UP_MS = 2_000;

/**
 * Many nodes on PostgreSQL: a publish reaches local sockets at once and other nodes through
 * NOTIFY after the commit. A notification lost in between, or while the LISTEN connection was
 * down, is covered by a catch-up that asks the store which of this node's conversations
 * changed: every 2 s, and at once when listening resumes. A reply is late by seconds at most,
 * never lost.
 */
interface PgBusParts {
  db: Db;
  logger: Logger;
  health: StoreHealth;
}

export class PgBus implements ConversationBus {
  private readonly local = new LocalBus();
  private readonly node = newId();
  private readonly catchUp: BackgroundLoop;
  /** The start of the window no catch-up has covered yet; it moves only when one succeeds. */
  private since = isoIn(-CATCH_UP_MS);

  private channel: StoreChannel | undefined;
  private readonly remote = new Set<(conversationId: string) => void>();

  private constructor(private readonly parts: PgBusParts) {
    this.catchUp = new BackgroundLoop(
      { what: 'conversation catch-up', pass: () => this.catchUpPass(), health: parts.health },
      { everyMs: CATCH_UP_MS },
    );
    this.catchUp.start();
  }

  static async open(parts: PgBusParts & { openChannel: NonNullable<Store['openChannel']> }): Promise<PgBus> {
    const { openChannel, logger, health } = parts;
    const bus = new PgBus(parts);
    bus.channel = await openChannel({
      message: (payload) => bus.onNotification(payload),
      lost: (err) => health.failed(err, 'listening for other nodes'),
      restored: () => {
        logger.info('listening for other nodes again');
        void bus.catchUp.run();
      },
    });
    return bus;
  }

  private onNotification(payload: string): void {
    const [node, conversationId] = payload.split(':');
    if (node !== this.node && conversationId) {
      this.local.publish(conversationId);
      for (const listener of this.remote) listener(conversationId);
    }
  }

  private async catchUpPass(): Promise<void> {
    // Overlapping windows: a clock step between nodes costs a re-read, not an event.
    const next = isoIn(-CATCH_UP_MS);
    const ids = this.local.subscribed();
    if (ids.length)
      for (const id of await conversationsUpdatedSince(this.parts.db, ids, this.since)) this.local.publish(id);
    this.since = next;
  }

  publish(conversationId: string, frames?: readonly StoredFrame[]): void {
    this.local.publish(conversationId, frames);
    // A lost notification is covered by the catch-up.
    this.channel
      ?.notify(`${this.node}:${conversationId}`)
      .catch((err) => this.parts.health.failed(err, 'notifying other nodes'));
  }

  subscribe(conversationId: string, listener: BusListener): () => void {
    return this.local.subscribe(conversationId, listener);
  }

  subscribeRemote(listener: (conversationId: string) => void): () => void {
    this.remote.add(listener);
    return () => this.remote.delete(listener);
  }

  async close(): Promise<void> {
    await this.catchUp.stop();
    await this.channel?.close();
    await this.local.close();
  }
}
