import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PONG_WAIT_MS, QUIET_MS, SessionClient, type SessionEvent, type Socket, type Surroundings } from './client';
import type { ServerFrame } from './protocol';

/** A socket whose far end the test plays: it opens, answers and dies only when told to. */
class FakeSocket implements Socket {
  readyState = 0;
  readonly sent: Record<string, unknown>[] = [];
  closedByWidget: number | undefined;
  onopen: Socket['onopen'] = null;
  onmessage: Socket['onmessage'] = null;
  onclose: Socket['onclose'] = null;

  constructor(readonly url: string) {}

  send(data: string): void {
    if (this.readyState !== 1) throw new Error('sent on a socket that is not open');
    this.sent.push(JSON.parse(data) as Record<string, unknown>);
  }

  /** Like a browser on a dead connection: closing starts, but no close event ever arrives. */
  close(code?: number): void {
    this.closedByWidget = code ?? 1005;
    this.readyState = 2;
  }

  open(): void {
    this.readyState = 1;
    this.onopen?.({} as Event);
  }

  receive(frame: Record<string, unknown>): void {
    this.onmessage?.({ data: JSON.stringify(frame) } as MessageEvent);
  }

  /** The far end closes (or the browser notices the connection is gone). */
  lose(code = 1006): void {
    this.readyState = 3;
    this.onclose?.({ code } as CloseEvent);
  }

  sentOf(type: string): Record<string, unknown>[] {
    return this.sent.filter((f) => f.type === type);
  }
}

/** The browser's network and visibility events, raised by the test. */
class FakeSurroundings implements Surroundings {
  isOnline = true;
  private on: Parameters<Surroundings['watch']>[0] | undefined;
  online = () => this.isOnline;
  watch(on: Parameters<Surroundings['watch']>[0]) {
    this.on = on;
    return () => (this.on = undefined);
  }
  goOffline(): void {
    this.isOnline = false;
    this.on?.offline();
  }
  goOnline(): void {
    this.isOnline = true;
    this.on?.online();
  }
  becomeVisible(): void {
    this.on?.visible();
  }
}

const CONVERSATION = '6f1d0c3e-9a0b-4d7e-8f5a-2b3c4d5e6f70';
const token = (): string => `h.${btoa(JSON.stringify({ exp: Math.floor(Date.now() / 1000) + 3600 }))}.s`;
const ready = (lastSeq = 0): ServerFrame => ({
  type: 'ready',
  conversation_id: CONVERSATION,
  resumed: lastSeq > 0,
  last_seq: lastSeq,
  token_expires_at: new Date(Date.now() + 3_600_000).toISOString(),
  agent: { name: 'Front desk', greeting: null, language: 'en-US', voice: null },
  widget: {},
});

describe('the session client on unreliable networks', () => {
  let sockets: FakeSocket[];
  let around: FakeSurroundings;
  let client: SessionClient;
  let events: SessionEvent[];
  const latest = (): FakeSocket => sockets[sockets.length - 1]!;
  /** Lets the token promise and the timers due so far run. */
  const settle = (ms = 0) => vi.advanceTimersByTimeAsync(ms);

  async function connected(lastSeq = 0): Promise<FakeSocket> {
    await settle();
    const ws = latest();
    ws.open();
    ws.receive(ready(lastSeq) as unknown as Record<string, unknown>);
    return ws;
  }

  beforeEach(() => {
    vi.useFakeTimers();
    sockets = [];
    around = new FakeSurroundings();
    events = [];
    client = new SessionClient({
      baseUrl: 'http://service.test',
      deploymentId: 'd1',
      getToken: async () => token(),
      storage: undefined,
      openSocket: (url) => {
        const ws = new FakeSocket(url);
        sockets.push(ws);
        return ws;
      },
      surroundings: around,
    });
    client.onEvent((e) => events.push(e));
    client.start();
  });

  afterEach(() => {
    client.stop();
    vi.useRealTimers();
  });

  it('asks with ping after 10 s of silence, and keeps a socket that answers', async () => {
    const ws = await connected();
    await settle(QUIET_MS - 1);
    expect(ws.sentOf('ping')).toHaveLength(0);
    await settle(1);
    expect(ws.sentOf('ping')).toHaveLength(1);
    ws.receive({ type: 'pong' });
    await settle(PONG_WAIT_MS + QUIET_MS - 1);
    expect(ws.closedByWidget).toBeUndefined();
    expect(sockets).toHaveLength(1);
    expect(ws.sentOf('ping')).toHaveLength(2);
    expect(client.view.status).toBe('open');
  });

  it('any frame counts as a sign of life: no ping while events keep coming', async () => {
    const ws = await connected();
    for (let seq = 1; seq <= 5; seq++) {
      await settle(QUIET_MS - 1_000);
      ws.receive({ type: 'greeting', seq, text: `hello ${seq}` });
    }
    expect(ws.sentOf('ping')).toHaveLength(0);
  });

  it('replaces a connection that died without a close, resumes from last_seq and resends the unconfirmed turn once', async () => {
    const ws = await connected();
    ws.receive({ type: 'greeting', seq: 1, text: 'Welcome' });
    client.say('When is breakfast?', 'text');
    const [turn] = ws.sentOf('user_turn');
    // From here the connection swallows everything and never closes.
    await settle(QUIET_MS);
    expect(ws.sentOf('ping')).toHaveLength(1);
    await settle(PONG_WAIT_MS - 1);
    expect(sockets).toHaveLength(1);
    expect(client.view.status).toBe('open');
    await settle(1);
    expect(ws.closedByWidget).toBeDefined();
    expect(client.view.status).toBe('reconnecting');
    await settle(500); // the first retry waits at most half a second
    expect(sockets).toHaveLength(2);
    const next = latest();
    next.open();
    expect(next.sent[0]).toMatchObject({ type: 'hello', conversation_id: CONVERSATION, last_seq: 1 });
    next.receive(ready(1) as unknown as Record<string, unknown>);
    expect(next.sentOf('user_turn')).toEqual([turn]);
    // The dead socket's late events change nothing.
    ws.lose();
    ws.receive({ type: 'conversation_ended', seq: 2, reason: 'user_ended' });
    expect(client.view.status).toBe('open');
    expect(sockets).toHaveLength(2);
  });

  it('gives up on a socket that never opens after the same 20 s', async () => {
    await settle();
    expect(sockets).toHaveLength(1);
    await settle(QUIET_MS + PONG_WAIT_MS);
    expect(sockets[0]!.closedByWidget).toBeDefined();
    await settle(500);
    expect(sockets).toHaveLength(2);
  });

  it('says "offline" while the browser is offline, and reconnects at once when it is back, whatever the backoff', async () => {
    await connected();
    around.goOffline();
    expect(client.view.status).toBe('offline');
    // Every attempt fails while offline: the backoff grows well past a few seconds.
    latest().lose();
    for (let i = 0; i < 5; i++) {
      await settle(30_000);
      latest().lose();
    }
    expect(client.view.status).toBe('offline');
    const before = sockets.length;
    around.goOnline();
    expect(client.view.status).toBe('reconnecting');
    await settle(); // the token promise only: no timer has to run
    expect(sockets).toHaveLength(before + 1);
    latest().open();
    latest().receive(ready() as unknown as Record<string, unknown>);
    expect(client.view.status).toBe('open');
  });

  it('replaces an open socket on "online": it may have died with the old network', async () => {
    const ws = await connected();
    around.goOffline();
    around.goOnline();
    await settle();
    expect(ws.closedByWidget).toBeDefined();
    expect(sockets).toHaveLength(2);
  });

  it('a page seen again reconnects at once when its socket is closed, and leaves an open one alone', async () => {
    const ws = await connected();
    around.becomeVisible();
    await settle();
    expect(sockets).toHaveLength(1);
    ws.lose();
    expect(client.view.status).toBe('reconnecting');
    around.becomeVisible();
    await settle();
    expect(sockets).toHaveLength(2);
  });

  it('speaks only the replies to voice turns this page asked', async () => {
    const ws = await connected();
    client.say('Where can I park?', 'voice');
    const mine = ws.sentOf('user_turn')[0]!;
    ws.receive({ type: 'turn_accepted', seq: 1, turn_id: 't1', client_turn_id: mine.client_turn_id, text: 'Where can I park?', mode: 'voice' });
    // Another tab of the same conversation asked this one by voice.
    ws.receive({ type: 'turn_accepted', seq: 2, turn_id: 't2', client_turn_id: 'other-tab', text: 'Is there a spa?', mode: 'voice' });
    ws.receive({ type: 'reply', seq: 3, turn_id: 't2', text: 'On the roof.' });
    ws.receive({ type: 'reply', seq: 4, turn_id: 't1', text: 'In the garage.' });
    const replies = events.filter((e) => e.type === 'reply');
    expect(replies).toMatchObject([
      { turnId: 't2', mode: 'voice', speak: false },
      { turnId: 't1', mode: 'voice', speak: true },
    ]);
  });
});
