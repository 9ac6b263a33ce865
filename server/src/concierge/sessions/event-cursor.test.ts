import { describe, expect, it } from 'vitest';
import { createLogger } from '../../logger.js';
import { StoreHealth } from '../../store/store-health.js';
import type { StoredFrame } from '../events/event.repository.js';
import { DRAIN_TIMEOUT_MS, EventCursor } from './event-cursor.js';
import type { SessionSocket } from './session-socket.js';

const stored = (seq: number): StoredFrame => ({
  seq,
  type: 'reply',
  frame: JSON.stringify({ type: 'reply', seq }),
});

/** What a pg client throws for a query on a connection the server terminated. */
const terminated = () =>
  Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });

function cursorOver(read: (seq: number) => Promise<StoredFrame[]>) {
  const sent: string[] = [];
  const failures: unknown[] = [];
  let closed = false;
  const socket = {
    bufferedAmount: 0,
    send: (data: string) => void sent.push(data),
    terminate: () => void (closed = true),
  } as unknown as SessionSocket;
  const cursor = new EventCursor(
    {
      socket,
      source: { framesAfter: (_id, seq) => read(seq) },
      owner: {
        isClosed: () => closed,
        conversationEnded: () => {},
        conversationGone: () => {},
        failed: (err) => void failures.push(err),
        sent: () => {},
      },
      health: new StoreHealth({ ping: async () => {}, logger: createLogger('silent') }),
    },
    { conversationId: 'c', sentSeq: 0 },
    { drainTimeoutMs: DRAIN_TIMEOUT_MS },
  );
  return { cursor, sent, failures, close: () => (closed = true) };
}

describe('a session cursor meeting a store outage', () => {
  it('reads again once the store answers, instead of ending the session', async () => {
    let outage = 2;
    const { cursor, sent, failures } = cursorOver(async (seq) => {
      if (outage-- > 0) throw terminated();
      return seq < 2 ? [stored(1), stored(2)].filter((f) => f.seq > seq) : [];
    });
    await cursor.flush();
    expect(failures).toEqual([]);
    expect(sent.map((f) => JSON.parse(f).seq)).toEqual([1, 2]);
  });

  it('stops retrying when its session ends, and reports nothing', async () => {
    let reads = 0;
    const { cursor, failures } = cursorOver(async () => {
      reads++;
      throw terminated();
    });
    const flushing = cursor.flush();
    await new Promise((r) => setTimeout(r, 150));
    cursor.stop();
    await flushing;
    const after = reads;
    await new Promise((r) => setTimeout(r, 400));
    expect([after >= 2, reads, failures]).toEqual([true, after, []]);
  });

  it('ends the session on an error that is not an outage', async () => {
    const bug = new TypeError('not an outage');
    const { cursor, failures } = cursorOver(async () => {
      throw bug;
    });
    await cursor.flush();
    expect(failures).toEqual([bug]);
  });
});
