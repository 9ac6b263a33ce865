import { AppError } from '../../errors.js';
import { BackgroundLoop } from '../../shared/background-loop.js';
import { PerKeyCap } from '../../shared/per-key-cap.js';
import { isoIn } from '../../shared/time.js';
import type { Db } from '../../database.js';
import type { StoreHealth } from '../../store/store-health.js';
import type { ConversationBus } from '../events/conversation-bus.js';
import type { Committed } from '../events/event.recorder.js';
import type { ActivitySettings } from './activity-settings.js';
import { activitySince, conversationOwner, handoffsSince } from './activity.repository.js';
import {
  ActivityReader,
  eventItem,
  handoffItem,
  handoffOf,
  type Item,
  LAST_EVENT_ID,
  piece,
  resyncItem,
} from './activity-reader.js';

/** How far before a Last-Event-ID a resumed stream reads again: events committed out of their time order are not missed (some are sent twice). */
const RESUME_MARGIN_MS = 5_000;
/** Events a resumed stream sends from the store at most before going live; more, and it is told to resync instead. */
const RESUME_LIMIT = 2_000;
/** Events one pass of the catch-up between nodes reads at most. */
const CATCH_UP_LIMIT = 10_000;
/** What a client refused for too many streams is told to wait, in seconds. */
const STREAMS_RETRY_AFTER_S = 5;
/** How many times per heartbeat the readers are looked at: a quiet one hears something within `heartbeatMs`. */
const BEATS_PER_HEARTBEAT = 5;
/** Remote conversations whose owner is remembered, at most. */
const OWNERS_KEPT = 10_000;

/** A customer's readers on this node, and how far it has told them each conversation (its events' seq, its handoffs' time). */
interface Feed {
  readers: Set<ActivityReader>;
  /** Items delivered since the last flush. */
  pending: Item[];
  lastSeq: Map<string, number>;
  lastHandoff: Map<string, number>;
  /** Since when the store is asked for what other nodes stored. */
  since: string;
  /** Reads from the store, one at a time: two reads of one conversation never send its events twice. */
  work: Promise<void>;
}

/**
 * The activity stream (README, A person in the conversation): every stored widget event of a
 * customer's conversations, and every change of who handles one, to the customer's readers on
 * this node. What this node commits comes at once, with its frames; what other nodes commit
 * comes through the bus's notification and a read of the store, and a periodic read covers a
 * lost notification.
 */
export class ActivityHub {
  readonly #feeds = new Map<string, Feed>();
  readonly #perCustomer: PerKeyCap;
  readonly #perPrincipal: PerKeyCap;
  readonly #owners = new Map<string, { customer_id: string; deployment_id: string }>();
  readonly #catchUp: BackgroundLoop;
  #unsubscribe: (() => void) | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  /** Feeds given items since the last flush, and the flush that will hand them to their readers. */
  readonly #unflushed = new Set<Feed>();
  #flush: NodeJS.Timeout | undefined;
  /** Set when the node drains: every stream ends, and one opened from then on ends at once. */
  #ending = false;

  constructor(
    private readonly parts: { db: Db; bus: ConversationBus; health: StoreHealth },
    private readonly settings: ActivitySettings,
  ) {
    this.#catchUp = new BackgroundLoop(
      { what: 'activity catch-up', pass: () => this.#catchUpPass(), health: parts.health },
      { everyMs: settings.catchUpEveryMs },
    );
    this.#perCustomer = new PerKeyCap(settings.streamsPerCustomer);
    this.#perPrincipal = new PerKeyCap(settings.streamsPerPrincipal);
  }

  start(): void {
    const tick = this.settings.heartbeatMs / BEATS_PER_HEARTBEAT;
    // A reader is spoken to when it would otherwise pass heartbeatMs in silence before the next look.
    this.#heartbeat = setInterval(() => {
      const now = Date.now();
      for (const feed of this.#feeds.values())
        for (const reader of feed.readers) reader.beat(now, this.settings.heartbeatMs - tick);
    }, tick).unref();
    if (!this.settings.otherNodes) return;
    this.#unsubscribe = this.parts.bus.subscribeRemote(
      (conversationId) =>
        void this.#remote(conversationId).catch((err) => this.parts.health.failed(err, 'activity stream')),
    );
    this.#catchUp.start();
  }

  /**
   * Ends every stream now, and each one opened from now on as soon as it starts (a draining node):
   * EventSource reconnects with Last-Event-ID, through the balancer, to a node that stays. An
   * endless response would otherwise hold the node's stop until it is killed.
   */
  endStreams(): void {
    this.#ending = true;
    for (const feed of this.#feeds.values()) for (const reader of feed.readers) reader.close();
  }

  /** Ends the streams `principal` holds on this node now (a console user removed from the team). */
  endStreamsOf(customerId: string, principal: string): void {
    for (const reader of this.#feeds.get(customerId)?.readers ?? []) if (reader.principal === principal) reader.close();
  }

  async stop(): Promise<void> {
    this.endStreams();
    clearInterval(this.#heartbeat);
    clearTimeout(this.#flush);
    this.#unsubscribe?.();
    await this.#catchUp.stop();
    for (const feed of this.#feeds.values()) for (const reader of feed.readers) reader.close();
  }

  /** What this node committed: to the readers of its customer, at once. */
  readonly committed = (list: readonly Committed[]): void => {
    const now = Date.now();
    for (const c of list) {
      const feed = this.#feeds.get(c.customerId);
      if (!feed) continue;
      for (const frame of c.frames)
        this.#deliver(
          feed,
          eventItem(
            { conversation_id: c.conversationId, deployment_id: c.deploymentId, seq: frame.seq, frame: frame.frame },
            now,
          ),
        );
      if (c.handoff) this.#deliver(feed, handoffItem(c.conversationId, c.deploymentId, c.handoff, now));
    }
  };

  /**
   * A new reader of a customer's activity for `principal` (an API key or a console user); with
   * `lastEventId`, what was stored since (and a few seconds before: see RESUME_MARGIN_MS) comes
   * first, or a `resync` event when that is more than a reader may hold. Ends when `signal` aborts
   * or the reader falls too far behind. Past the streams a customer or principal may hold on this
   * node: `rate_limited`.
   */
  async open(
    customerId: string,
    principal: string,
    lastEventId: string | undefined,
    signal: AbortSignal,
  ): Promise<AsyncGenerator<Buffer>> {
    const releaseCustomer = this.#perCustomer.take(customerId);
    const releasePrincipal = releaseCustomer && this.#perPrincipal.take(`${customerId}\n${principal}`);
    if (!releaseCustomer || !releasePrincipal) {
      releaseCustomer?.();
      const whose = releaseCustomer
        ? `this ${principal.startsWith('user:') ? 'console user' : 'API key'} (${this.settings.streamsPerPrincipal})`
        : `this customer (${this.settings.streamsPerCustomer})`;
      throw new AppError(
        'rate_limited',
        `Too many activity streams open for ${whose} on this node; close one (a tab), or retry after the time in Retry-After`,
        undefined,
        STREAMS_RETRY_AFTER_S,
      );
    }
    let feed = this.#feeds.get(customerId);
    if (!feed)
      this.#feeds.set(
        customerId,
        (feed = {
          readers: new Set(),
          pending: [],
          lastSeq: new Map(),
          lastHandoff: new Map(),
          since: isoIn(-this.settings.catchUpEveryMs),
          work: Promise.resolve(),
        }),
      );
    const reader = new ActivityReader(this.settings, principal);
    if (this.#ending) reader.close();
    feed.readers.add(reader);
    // Runs twice (the client leaves, then the stream ends): a later feed of this customer is not this one's to remove.
    const leave = () => {
      reader.close();
      releaseCustomer();
      releasePrincipal();
      feed.readers.delete(reader);
      if (!feed.readers.size && this.#feeds.get(customerId) === feed) this.#feeds.delete(customerId);
    };
    signal.addEventListener('abort', leave, { once: true });
    try {
      reader.caughtUp(await this.#resumed(customerId, lastEventId));
    } catch (err) {
      leave();
      throw err;
    }
    const chunks = reader.chunks();
    return (async function* () {
      try {
        yield* chunks;
      } finally {
        leave();
      }
    })();
  }

  async #resumed(customerId: string, lastEventId: string | undefined): Promise<Item[]> {
    const last = LAST_EVENT_ID.exec(lastEventId ?? '');
    if (!last) return [];
    const startedAt = Date.now();
    // After a resync the reader went live at that instant, already listening: no margin is needed, and one would bring back what it skipped.
    const since = new Date(Number(last[1]) - (last[2] ? RESUME_MARGIN_MS : 0)).toISOString();
    const [events, handoffs] = await Promise.all([
      activitySince(this.parts.db, customerId, since, RESUME_LIMIT + 1),
      handoffsSince(this.parts.db, customerId, since),
    ]);
    const items = events.map((row) => eventItem(row, Date.parse(row.created_at)));
    // The event Last-Event-ID names was received: not sent again.
    const received = items.findIndex((i) => i.conversationId === last[2] && String(i.seq) === last[3]);
    const caughtUp = [...(received >= 0 ? items.slice(received + 1) : items), ...handoffs.map(handoffOf)];
    // More than a reader may hold: dropping it would only bring it back for the same catch-up, every 2 s for ever.
    const bytes = caughtUp.reduce((sum, item) => sum + Buffer.byteLength(item.text), 0);
    if (events.length > RESUME_LIMIT || bytes > this.settings.maxUnsentBytes / 2) return [resyncItem(startedAt)];
    return caughtUp;
  }

  /** Each event and each handoff once to a feed, whichever way it came. */
  #deliver(feed: Feed, item: Item): void {
    const [told, at] = item.seq !== undefined ? [feed.lastSeq, item.seq] : [feed.lastHandoff, item.handoffAt!];
    if (at <= (told.get(item.conversationId) ?? 0)) return;
    told.set(item.conversationId, at);
    feed.pending.push(item);
    this.#unflushed.add(feed);
    this.#flush ??= setTimeout(() => {
      this.#flush = undefined;
      for (const unflushed of this.#unflushed) {
        const items = unflushed.pending.splice(0);
        // One piece for every reader: encoded once, whatever the number of readers.
        const bytes = piece(items);
        for (const reader of unflushed.readers) reader.take(items, bytes);
      }
      this.#unflushed.clear();
    }, this.settings.flushEveryMs);
  }

  /** Another node stored events of this conversation: read them if their customer has readers here. */
  async #remote(conversationId: string): Promise<void> {
    let owner = this.#owners.get(conversationId);
    if (!owner) {
      owner = await conversationOwner(this.parts.db, conversationId);
      if (!owner) return;
      if (this.#owners.size >= OWNERS_KEPT) this.#owners.delete(this.#owners.keys().next().value!);
      this.#owners.set(conversationId, owner);
    }
    const feed = this.#feeds.get(owner.customer_id);
    if (!feed) return;
    const customerId = owner.customer_id;
    feed.work = feed.work.then(async () => {
      const rows = await activitySince(this.parts.db, customerId, feed.since, CATCH_UP_LIMIT, {
        conversationId,
        afterSeq: feed.lastSeq.get(conversationId) ?? 0,
      });
      for (const row of rows) this.#deliver(feed, eventItem(row, Date.parse(row.created_at)));
    });
    await feed.work;
  }

  /** Covers notifications lost between nodes: each feed's events and handoffs since its last pass. */
  async #catchUpPass(): Promise<void> {
    for (const [customerId, feed] of this.#feeds) {
      const next = isoIn(-this.settings.catchUpEveryMs);
      feed.work = feed.work.then(async () => {
        const [events, handoffs] = await Promise.all([
          activitySince(this.parts.db, customerId, feed.since, CATCH_UP_LIMIT),
          handoffsSince(this.parts.db, customerId, feed.since),
        ]);
        for (const row of events) this.#deliver(feed, eventItem(row, Date.parse(row.created_at)));
        for (const row of handoffs) this.#deliver(feed, handoffOf(row));
        feed.since = next;
      });
      await feed.work;
    }
  }
}
