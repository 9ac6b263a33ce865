import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Connection, type ConnectionOwner, PONG_WAIT_MS, QUIET_MS } from './connection';
import { FakeSocket, FakeSurroundings, reconnectWaits } from './fake-browser';
import type { ServerFrame } from './protocol';
import type { Status } from './transcript';

const token = (ttlS = 3600): string => `h.${btoa(JSON.stringify({ exp: Math.floor(Date.now() / 1000) + ttlS }))}.s`;

describe('the connection: one socket, backoff with jitter, heartbeat, token refresh', () => {
  let sockets: FakeSocket[];
  let around: FakeSurroundings;
  let told: { statuses: Status[]; frames: ServerFrame[]; closed: number[]; errors: string[] };
  let hello: ReturnType<ConnectionOwner['hello']>;
  let tokens: number;
  let ttlS: number;
  let connection: Connection;
  let onClosed: (code: number) => void;
  const latest = (): FakeSocket => sockets[sockets.length - 1]!;
  const settle = (ms = 0) => vi.advanceTimersByTimeAsync(ms);

  beforeEach(() => {
    vi.useFakeTimers();
    sockets = [];
    around = new FakeSurroundings();
    told = { statuses: [], frames: [], closed: [], errors: [] };
    hello = {};
    tokens = 0;
    ttlS = 3600;
    onClosed = () => {};
    connection = new Connection(
      {
        baseUrl: 'https://service.test',
        deploymentId: 'd 1',
        getToken: async () => {
          tokens++;
          return token(ttlS);
        },
        openSocket: (url) => {
          const ws = new FakeSocket(url);
          sockets.push(ws);
          return ws;
        },
        surroundings: around,
      },
      {
        hello: () => hello,
        frame: (frame) => told.frames.push(frame),
        audio: () => {},
        status: (status) => told.statuses.push(status),
        closed: (code) => {
          told.closed.push(code);
          onClosed(code);
        },
        error: (code) => told.errors.push(code),
      },
    );
  });

  afterEach(() => {
    connection.stop();
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it('opens wss:// on the deployment path and says hello with the token, where to resume and whether the browser recognises speech', async () => {
    hello = { conversation_id: 'c1', last_seq: 7, browser_recognition: false };
    connection.start();
    await settle();
    const ws = latest();
    expect(ws.url).toBe('wss://service.test/embed/concierge/d%201/ws');
    ws.open();
    expect(ws.sent).toEqual([
      { type: 'hello', token: expect.any(String), conversation_id: 'c1', last_seq: 7, browser_recognition: false },
    ]);
    ws.receive({ type: 'pong' });
    expect(told.frames).toEqual([{ type: 'pong' }]);
    expect(told.statuses).toEqual(['connecting']);
  });

  it('waits twice as long after each failure up to 30 s, half of it fixed and half at random; opened() starts over', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(1);
    connection.start();
    await settle();
    expect(await reconnectWaits(sockets, 8, settle, 50)).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    expect(told.closed).toEqual(Array(8).fill(1006));
    expect(told.statuses.at(-1)).toBe('reconnecting');
    latest().open();
    connection.opened();
    expect(connection.link).toBe('open');
    latest().lose();
    await settle(500);
    expect(sockets).toHaveLength(10);
  });

  it('pings after a quiet spell and replaces a socket that answers nothing, resuming from where the owner says', async () => {
    connection.start();
    await settle();
    const first = latest();
    first.open();
    await settle(QUIET_MS);
    expect(first.sentOf('ping')).toHaveLength(1);
    await settle(PONG_WAIT_MS);
    expect(first.closedByWidget).toBe(1005);
    expect(told.closed).toEqual([0]);
    hello = { conversation_id: 'c1', last_seq: 3 };
    await settle(1_000);
    latest().open();
    expect(latest().sentOf('hello')[0]).toMatchObject({ conversation_id: 'c1', last_seq: 3 });
  });

  it('refreshes the token a minute before it expires; after a 4401 it fetches a new one', async () => {
    ttlS = 120;
    connection.start();
    await settle();
    latest().answersPings = true;
    latest().open();
    connection.opened();
    expect(tokens).toBe(1);
    await settle(60_000);
    expect(tokens).toBe(2);
    expect(latest().sentOf('refresh_token')).toHaveLength(1);
    latest().lose(4401);
    await settle(1_000);
    expect(tokens).toBe(3);
  });

  it('says "offline" while the browser is offline, reconnects at once when it is back, and stops for good once the owner ends it', async () => {
    connection.start();
    await settle();
    latest().open();
    connection.opened();
    around.goOffline();
    expect(connection.shown).toBe('offline');
    around.goOnline();
    await settle();
    expect(sockets).toHaveLength(2);
    expect(told.statuses).toEqual(['connecting', 'offline', 'open', 'reconnecting']);
    onClosed = () => (connection.link = 'ended');
    latest().lose(4410);
    await settle(60_000);
    expect(sockets).toHaveLength(2);
    expect(connection.shown).toBe('ended');
  });
});
