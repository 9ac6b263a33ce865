import type { ActivityEventRow, HandoffRow } from './activity.repository.js';

/** One message of the stream: the conversation event it carries (`seq`), or a handoff (`handoffAt`, ms). */
export interface Item {
  conversationId: string;
  seq?: number;
  handoffAt?: number;
  text: string;
}

/**
 * `{ms}-{conversation}-{seq}`, `-h` for a handoff, or `{ms}-resync`: the stream's ids, which
 * Last-Event-ID brings back.
 */
export const LAST_EVENT_ID = /^(\d{1,15})-(?:([0-9a-f-]{36})-(\d+|h)|resync)$/;

const sse = (id: string, data: string, event?: string) =>
  `id: ${id}\n${event ? `event: ${event}\n` : ''}data: ${data}\n\n`;

export function eventItem(
  row: Pick<ActivityEventRow, 'conversation_id' | 'deployment_id' | 'seq' | 'frame'>,
  atMs: number,
): Item {
  // The frame is stored as JSON text: spliced in, not parsed and serialised again.
  const data = `{"conversation_id":${JSON.stringify(row.conversation_id)},"deployment_id":${JSON.stringify(row.deployment_id)},"event":${row.frame}}`;
  return {
    conversationId: row.conversation_id,
    seq: row.seq,
    text: sse(`${atMs}-${row.conversation_id}-${row.seq}`, data),
  };
}

export function handoffItem(
  conversationId: string,
  deploymentId: string,
  handoff: Record<string, unknown>,
  atMs: number,
): Item {
  return {
    conversationId,
    handoffAt: atMs,
    text: sse(
      `${atMs}-${conversationId}-h`,
      JSON.stringify({ conversation_id: conversationId, deployment_id: deploymentId, ...handoff }),
      'handoff',
    ),
  };
}

export const handoffOf = (row: HandoffRow) =>
  handoffItem(
    row.id,
    row.deployment_id,
    { handler: row.handler, name: row.handler_name, needs_person: row.needs_person === 1, reason: row.handoff_reason },
    Date.parse(row.handoff_at!),
  );

/**
 * Said instead of a catch-up larger than a reader may hold: what happened meanwhile must be read
 * from the API again. Its id lets a reconnect resume from here, not from the old place again.
 */
export const resyncItem = (atMs: number): Item => ({
  conversationId: '',
  text: sse(`${atMs}-resync`, JSON.stringify({ reason: 'too_far_behind' }), 'resync'),
});

const RETRY = Buffer.from('retry: 2000\n\n');
const KEEP_ALIVE = Buffer.from(': keep-alive\n\n');
export const piece = (items: readonly Item[]): Buffer => Buffer.from(items.map((i) => i.text).join(''));

/**
 * One reader of the stream: what the hub hands it waits in its queue until the client takes it.
 * Past `maxUnsentBytes` it is closed (the client resumes with Last-Event-ID), so a reader that
 * stops reading costs bounded memory, like a slow widget socket.
 */
export class ActivityReader {
  readonly #queue: Buffer[] = [];
  #bytes = 0;
  #wake: (() => void) | undefined;
  #closed = false;
  /** When the client was last handed something (ms). */
  #spokeAt = Date.now();
  /** While it catches up from the store, the live items held back. */
  #held: Item[] | undefined = [];

  constructor(
    private readonly settings: { maxUnsentBytes: number },
    /** Whose stream it is (an API key, or `user:<id>`): a removed user's end at once. */
    readonly principal: string,
  ) {}

  /** Live items, and the bytes every reader of the feed is sent for them (made once for all). */
  take(items: readonly Item[], bytes: Buffer): void {
    if (this.#held) this.#held.push(...items);
    else this.#send(bytes);
    this.#flush();
  }

  /** The store's items first, then what came live meanwhile that the store's did not already hold. */
  caughtUp(items: readonly Item[]): void {
    const sent = new Map<string, number>();
    for (const item of items)
      if (item.seq !== undefined) sent.set(item.conversationId, Math.max(item.seq, sent.get(item.conversationId) ?? 0));
    const held = (this.#held ?? []).filter(
      (item) => item.seq === undefined || item.seq > (sent.get(item.conversationId) ?? 0),
    );
    this.#held = undefined;
    if (items.length + held.length) this.#send(piece([...items, ...held]));
    this.#flush();
  }

  #send(bytes: Buffer): void {
    if (this.#closed) return;
    this.#queue.push(bytes);
    this.#bytes += bytes.length;
    if (this.#bytes > this.settings.maxUnsentBytes) this.close();
  }

  #flush(): void {
    if (this.#queue.length) this.#wake?.();
  }

  /** A comment when nothing will have gone out for `quietMs` by the next look, so proxies keep a quiet stream open. */
  beat(now: number, quietMs: number): void {
    if (now - this.#spokeAt < quietMs || this.#queue.length) return;
    this.#send(KEEP_ALIVE);
    this.#flush();
  }

  close(): void {
    this.#closed = true;
    this.#wake?.();
  }

  /** The stream's bytes as the client can take them: a retry hint first, then what each flush handed over. */
  async *chunks(): AsyncGenerator<Buffer> {
    yield RETRY;
    for (;;) {
      if (!this.#queue.length && !this.#closed) await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = undefined;
      if (this.#closed) return;
      if (!this.#queue.length) continue;
      const bytes = this.#queue.length === 1 ? this.#queue[0]! : Buffer.concat(this.#queue);
      this.#queue.length = 0;
      this.#bytes = 0;
      this.#spokeAt = Date.now();
      yield bytes;
    }
  }
}
