import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SessionClient, type SessionEvent, type SessionOptions } from './client';
import { FakeSocket, FakeSurroundings, MemoryStorage, reconnectWaits } from './fake-browser';
import { PONG_WAIT_MS, QUIET_MS } from './connection';
import type { ServerFrame } from './protocol';
import { serviceListener } from '../speech/service-listener';
import { endOfSpeech } from '../speech/silence';
import { ListenError } from '../speech/speech';
import { addEnglish } from '../ui/words';
import en from '../../locales/en.json';

// The panel's module brings the English words its listener says.
addEnglish(en);

const CONVERSATION = '6f1d0c3e-9a0b-4d7e-8f5a-2b3c4d5e6f70';
const token = (): string => `h.${btoa(JSON.stringify({ exp: Math.floor(Date.now() / 1000) + 3600 }))}.s`;
const ready = (lastSeq = 0): Extract<ServerFrame, { type: 'ready' }> => ({
  type: 'ready',
  conversation_id: CONVERSATION,
  resumed: lastSeq > 0,
  last_seq: lastSeq,
  token_expires_at: new Date(Date.now() + 3_600_000).toISOString(),
  agent: { name: 'Front desk', greeting: null, language: 'en-US', voice: null },
  widget: {},
  speech: { recognition: 'browser', synthesis: 'browser', mode: 'push_to_talk' },
});

const readyFrame = (lastSeq = 0): Record<string, unknown> => ready(lastSeq);

describe('the session client on unreliable networks', () => {
  let sockets: FakeSocket[];
  let around: FakeSurroundings;
  let client: SessionClient;
  let events: SessionEvent[];
  const latest = (): FakeSocket => sockets[sockets.length - 1]!;
  /** Lets the token promise and the timers due so far run. */
  const settle = (ms = 0) => vi.advanceTimersByTimeAsync(ms);

  /** A client on fake sockets, started; `more` adds to or replaces its options. */
  function started(more: Partial<SessionOptions> = {}): SessionClient {
    const made = new SessionClient({
      baseUrl: 'http://service.test',
      deploymentId: 'd1',
      getToken: async () => token(),
      storage: undefined,
      openSocket: (url) => sockets[sockets.push(new FakeSocket(url)) - 1]!,
      ...more,
    });
    made.start();
    return made;
  }

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
    client = started({ surroundings: around });
    client.onEvent((e) => events.push(e));
  });

  afterEach(() => {
    client.stop();
    vi.useRealTimers();
  });

  it('says in hello whether the browser recognises speech, and keeps where ready says speech is recognised', async () => {
    client.stop();
    client = started({ browserRecognition: false });
    await settle();
    const ws = latest();
    ws.open();
    await settle();
    expect(ws.sentOf('hello')[0]).toMatchObject({ type: 'hello', browser_recognition: false });
    expect(client.view.recognition).toBeUndefined();
    ws.receive({ ...ready(), speech: { recognition: 'service' } } as unknown as Record<string, unknown>);
    expect(client.view.recognition).toBe('service');
    // The service's own progress frame changes nothing in the view.
    ws.receive({ type: 'transcribing', client_turn_id: 'c1' });
    expect(client.view.lines).toEqual([]);
  });

  it("knows the deployment's look only from ready, and remembers it for the tab's next page: a launcher never shows another colour first", async () => {
    client.stop();
    const storage = new MemoryStorage();
    client = started({ storage });
    expect(client.view.styled).toBe(false);
    await settle();
    latest().open();
    latest().receive({ ...ready(), widget: { accent_color: '#0b6e4f', position: 'bottom-left' } });
    expect([client.view.styled, client.view.theme]).toEqual([
      true,
      { accent_color: '#0b6e4f', position: 'bottom-left' },
    ]);
    client.stop();
    // The next page of the tab: the look at once, before its socket opens; a new conversation keeps it.
    client = started({ storage });
    expect([client.view.styled, client.view.theme]).toEqual([
      true,
      { accent_color: '#0b6e4f', position: 'bottom-left' },
    ]);
  });

  it('streams an utterance to the service: audio_start, the audio as binary frames, audio_end at the quiet; the turn comes back from the service', async () => {
    const ws = await connected();
    let quiet = () => {};
    let audio: (pcm: ArrayBuffer) => void = () => {};
    let released = 0;
    const listener = serviceListener(client, async () => ({
      capture: async (onAudio, onQuiet) => {
        audio = onAudio;
        quiet = onQuiet;
        return { stop: () => void released++ };
      },
    }));
    const said: string[] = [];
    const heard = listener.listen('en-US', (text) => said.push(text));
    await settle();
    const [start] = ws.sentOf('audio_start') as { client_turn_id: string }[];
    expect(start).toMatchObject({ type: 'audio_start', sample_rate: 16000 });
    audio(new ArrayBuffer(3200));
    expect(ws.audio.map((a) => a.byteLength)).toEqual([3200]);
    quiet();
    expect(ws.sentOf('audio_end')).toEqual([{ type: 'audio_end', client_turn_id: start!.client_turn_id }]);
    expect(released).toBe(1);
    ws.receive({ type: 'transcribing', client_turn_id: start!.client_turn_id });
    ws.receive({
      type: 'turn_accepted',
      seq: 1,
      turn_id: 't1',
      client_turn_id: start!.client_turn_id,
      text: 'Breakfast?',
      mode: 'voice',
    });
    await expect(heard).resolves.toBe('');
    expect(said).toEqual(['Sending…', 'Transcribing…']);
    expect(client.view.lines).toMatchObject([
      { who: 'user', text: 'Breakfast?', mode: 'voice', clientTurnId: start!.client_turn_id },
    ]);

    // A refusal is said as its code; the microphone is let go.
    const refused = listener.listen('en-US', () => {});
    await settle();
    listener.stopListening();
    ws.receive({ type: 'error', code: 'speech_busy', message: 'busy' });
    await expect(refused).rejects.toEqual(new ListenError('speech_busy'));
    expect(released).toBe(2);
    // A refused microphone is the browser's own reason.
    const blocked = serviceListener(client, async () => ({
      capture: async () => Promise.reject(Object.assign(new Error('no'), { name: 'NotAllowedError' })),
    }));
    await expect(blocked.listen('en-US', () => {})).rejects.toEqual(new ListenError('not-allowed'));
  });

  it('hears the end of speech in its loudness: 0.8 s of quiet after speech, never before any', () => {
    const ended = endOfSpeech();
    expect(Array.from({ length: 20 }, () => ended(0.001, 100)).some(Boolean)).toBe(false);
    expect(ended(0.2, 100)).toBe(false);
    expect(Array.from({ length: 7 }, () => ended(0.001, 100))).toEqual(Array(7).fill(false));
    expect(ended(0.001, 100)).toBe(true);
  });

  it("tells the page's events and context (README, Greeting visitors first): held until ready, the context again after a reconnect, the page with each turn", async () => {
    client.stop();
    client = started({ page: () => ({ url: 'https://hotel.test/rooms', title: 'Rooms' }) });
    client.setContext({ basket: 1 });
    client.pageEvent('viewed', { room: 'deluxe' });
    const first = await connected();
    expect(client.rules).toEqual([]);
    expect(first.sent.slice(1)).toEqual([
      { type: 'context', data: { basket: 1 } },
      { type: 'page_event', name: 'viewed', data: { room: 'deluxe' } },
    ]);
    client.approached('rooms', 'shown');
    client.say('Is breakfast included?', 'text');
    expect(first.sent.slice(3)).toEqual([
      { type: 'proactive', rule_id: 'rooms', event: 'shown' },
      {
        type: 'user_turn',
        client_turn_id: expect.any(String),
        text: 'Is breakfast included?',
        mode: 'text',
        page: { url: 'https://hotel.test/rooms', title: 'Rooms' },
      },
    ]);
    // The socket drops: the context is told again; the events already sent are not.
    first.onclose?.({ code: 1006, reason: '' } as CloseEvent);
    await settle(31_000);
    const second = latest();
    second.open();
    second.receive({ ...readyFrame(), proactive: [{ id: 'rooms', when: { seconds_on_page: 5 }, teaser: 'Hi' }] });
    expect(client.rules).toEqual([{ id: 'rooms', when: { seconds_on_page: 5 }, teaser: 'Hi' }]);
    expect(second.sent.filter((f) => f.type !== 'hello' && f.type !== 'user_turn')).toEqual([
      { type: 'context', data: { basket: 1 } },
    ]);
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
    ws.receive({
      type: 'turn_accepted',
      seq: 1,
      turn_id: 't1',
      client_turn_id: mine.client_turn_id,
      text: 'Where can I park?',
      mode: 'voice',
    });
    // Another tab of the same conversation asked this one by voice.
    ws.receive({
      type: 'turn_accepted',
      seq: 2,
      turn_id: 't2',
      client_turn_id: 'other-tab',
      text: 'Is there a spa?',
      mode: 'voice',
    });
    ws.receive({ type: 'reply', seq: 3, turn_id: 't2', text: 'On the roof.' });
    ws.receive({ type: 'reply', seq: 4, turn_id: 't1', text: 'In the garage.' });
    const replies = events.filter((e) => e.type === 'reply');
    expect(replies).toMatchObject([
      { turnId: 't2', mode: 'voice', speak: false },
      { turnId: 't1', mode: 'voice', speak: true },
    ]);
  });
});

/** sessionStorage as a page has it: survives a reload (a new client over the same storage). */
describe('the session client: backoff, resume, resend and refresh', () => {
  let sockets: FakeSocket[];
  let tokens: number;
  let storage: MemoryStorage;
  let tokenTtlS: number;
  const clients: SessionClient[] = [];
  const latest = (): FakeSocket => sockets[sockets.length - 1]!;
  const settle = (ms = 0) => vi.advanceTimersByTimeAsync(ms);
  const mintedToken = (): string => {
    tokens++;
    return `h.${btoa(JSON.stringify({ exp: Math.floor(Date.now() / 1000) + tokenTtlS, n: tokens }))}.s`;
  };

  function newClient(): SessionClient {
    const client = new SessionClient({
      baseUrl: 'https://service.test',
      deploymentId: 'd1',
      getToken: async () => mintedToken(),
      storage,
      openSocket: (url) => {
        const ws = new FakeSocket(url);
        ws.answersPings = true;
        sockets.push(ws);
        return ws;
      },
    });
    clients.push(client);
    client.start();
    return client;
  }

  async function ready(ws: FakeSocket, lastSeq = 0): Promise<void> {
    ws.open();
    ws.receive(readyFrame(lastSeq));
    await settle();
  }

  beforeEach(() => {
    vi.useFakeTimers();
    sockets = [];
    tokens = 0;
    tokenTtlS = 3600;
    storage = new MemoryStorage();
  });

  afterEach(() => {
    for (const client of clients.splice(0)) client.stop();
    vi.restoreAllMocks();
    vi.useRealTimers();
  });

  it('opens wss:// on the deployment path and says hello with a fresh token', async () => {
    newClient();
    await settle();
    expect(latest().url).toBe('wss://service.test/embed/concierge/d1/ws');
    latest().open();
    expect(latest().sent).toEqual([{ type: 'hello', token: expect.stringMatching(/^h\./) }]);
  });

  it('waits twice as long after each failure, up to 30 s, with full jitter; a ready resets the wait', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.999_999);
    newClient();
    await settle();
    expect(await reconnectWaits(sockets, 8, settle, 100)).toEqual([500, 1000, 2000, 4000, 8000, 16000, 30000, 30000]);
    await ready(latest());
    latest().lose();
    await settle(500);
    expect(sockets).toHaveLength(10);
    // With the lowest draw, half the ceiling.
    vi.spyOn(Math, 'random').mockReturnValue(0);
    latest().lose();
    await settle(499);
    expect(sockets).toHaveLength(10);
    await settle(1);
    expect(sockets).toHaveLength(11);
  });

  it('resumes with conversation_id and last_seq, and shows each replayed event once', async () => {
    const client = newClient();
    await settle();
    await ready(latest());
    latest().receive({ type: 'greeting', seq: 1, text: 'Welcome' });
    latest().receive({
      type: 'turn_accepted',
      seq: 2,
      turn_id: 't1',
      client_turn_id: 'c1',
      text: 'Breakfast?',
      mode: 'text',
    });
    latest().lose();
    await settle(500);
    latest().open();
    expect(latest().sent[0]).toMatchObject({ type: 'hello', conversation_id: CONVERSATION, last_seq: 2 });
    latest().receive(readyFrame(3));
    // The server replays from last_seq; an event seen before is ignored.
    latest().receive({
      type: 'turn_accepted',
      seq: 2,
      turn_id: 't1',
      client_turn_id: 'c1',
      text: 'Breakfast?',
      mode: 'text',
    });
    latest().receive({ type: 'reply', seq: 3, turn_id: 't1', text: 'From 7.' });
    expect(client.view.lines.map((l) => [l.who, l.text, l.state])).toEqual([
      ['agent', 'Welcome', undefined],
      ['user', 'Breakfast?', 'answered'],
      ['agent', 'From 7.', undefined],
    ]);
  });

  it('a reload resends the turns still unconfirmed under their first client_turn_id, and forgets them once accepted', async () => {
    const first = newClient();
    await settle();
    await ready(latest());
    latest().lose(); // the turn is asked while the connection is down
    first.say('Is there parking?', 'text');
    first.stop();
    const remembered = JSON.parse(storage.getItem('concierge:d1')!) as {
      conversation_id: string;
      unconfirmed: { client_turn_id: string }[];
    };
    expect(remembered.conversation_id).toBe(CONVERSATION);
    const [turn] = remembered.unconfirmed;

    const reloaded = newClient();
    expect(reloaded.view.lines).toMatchObject([{ who: 'user', text: 'Is there parking?', state: 'sending' }]);
    await settle();
    latest().open();
    // A reload starts from nothing: it asks for every event again.
    expect(latest().sent[0]).toMatchObject({ type: 'hello', conversation_id: CONVERSATION, last_seq: 0 });
    latest().receive(readyFrame(0));
    expect(latest().sentOf('user_turn')).toEqual([
      { type: 'user_turn', client_turn_id: turn!.client_turn_id, text: 'Is there parking?', mode: 'text' },
    ]);
    latest().receive({
      type: 'turn_accepted',
      seq: 1,
      turn_id: 't9',
      client_turn_id: turn!.client_turn_id,
      text: 'Is there parking?',
      mode: 'text',
    });
    expect(JSON.parse(storage.getItem('concierge:d1')!)).toMatchObject({ unconfirmed: [] });
    expect(reloaded.view.lines).toMatchObject([{ who: 'user', text: 'Is there parking?', state: 'sent' }]);
  });

  it('refreshes the token on the open socket a minute before it expires, and again for the next one', async () => {
    tokenTtlS = 180;
    newClient();
    await settle();
    await ready(latest());
    expect(tokens).toBe(1);
    await settle(119_000);
    expect(latest().sentOf('refresh_token')).toHaveLength(0);
    await settle(1_000);
    expect(tokens).toBe(2);
    const [refresh] = latest().sentOf('refresh_token');
    expect(JSON.parse(atob(String(refresh!.token).split('.')[1]!))).toMatchObject({ n: 2 });
    await settle(120_000);
    expect(latest().sentOf('refresh_token')).toHaveLength(2);
    expect(sockets).toHaveLength(1);
  });

  it('after a 4401 fetches a new token; after a 4404 starts a new conversation instead of looping', async () => {
    const client = newClient();
    await settle();
    await ready(latest());
    latest().lose(4401);
    await settle(500);
    expect(tokens).toBe(2);
    latest().lose(4404);
    await settle(1_000);
    latest().open();
    expect(latest().sent[0]).toEqual({ type: 'hello', token: expect.any(String) });
    expect(client.view.status).toBe('reconnecting');
  });

  it.each([
    [4403, 'origin_not_allowed'],
    [4404, 'unknown_deployment'],
    [4410, 'deployment_inactive'],
  ])('a close %i %s before hello ends the widget with that reason and never reconnects', async (code, reason) => {
    const client = newClient();
    const seen: SessionEvent[] = [];
    client.onEvent((event) => seen.push(event));
    await settle();
    latest().lose(code, reason);
    await settle(60_000);
    expect(sockets).toHaveLength(1);
    expect([client.view.status, client.view.ended]).toEqual(['ended', reason]);
    expect(seen.at(-1)).toEqual({ type: 'ended', reason });
    if (code !== 4410) expect(seen[0]).toMatchObject({ type: 'error', code: reason, message: expect.any(String) });
  });
});

/** sessionStorage as a tab has it: what one client writes, the next page load of that tab reads. */
class TabStorage implements Pick<Storage, 'getItem' | 'setItem'> {
  private readonly items = new Map<string, string>();
  getItem = (key: string) => this.items.get(key) ?? null;
  setItem = (key: string, value: string) => void this.items.set(key, value);
}

describe('reading a reply out and running its actions', () => {
  let sockets: FakeSocket[];
  const clients: SessionClient[] = [];
  const latest = (): FakeSocket => sockets[sockets.length - 1]!;

  beforeEach(() => {
    vi.useFakeTimers();
    sockets = [];
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.stop();
    vi.useRealTimers();
  });

  /** A page of one tab (its storage), connected; what it speaks and runs is recorded. */
  async function page(storage: TabStorage, lastSeq = 0, synthesis = 'browser') {
    const spoken: string[] = [];
    const said: unknown[] = [];
    const service: unknown[] = [];
    const ran: string[] = [];
    const client = new SessionClient({
      baseUrl: 'http://service.test',
      deploymentId: 'd1',
      getToken: async () => token(),
      storage: storage as unknown as Storage,
      openSocket: (url) => {
        const ws = new FakeSocket(url);
        sockets.push(ws);
        return ws;
      },
      voice: {
        say: (at, text) => {
          spoken.push(text);
          said.push({ ...at, text });
        },
        speech: (frame) => void service.push(frame),
        audio: (pcm) => void service.push(pcm.byteLength),
      },
      act: (action, turnId) => ran.push(`${action.name}@${turnId}`),
    });
    clients.push(client);
    client.start();
    await vi.advanceTimersByTimeAsync(0);
    const ws = latest();
    ws.open();
    ws.receive({ ...readyFrame(lastSeq), speech: { recognition: 'browser', synthesis } });
    return { client, ws, spoken, said, service, ran };
  }

  const asked = (clientTurnId: string, mode: 'text' | 'voice') => [
    { type: 'turn_accepted', seq: 1, turn_id: 't1', client_turn_id: clientTurnId, text: 'Dinner?', mode },
    { type: 'turn_acknowledged', seq: 2, turn_id: 't1' },
  ];
  const part = (seq: number, n: number, text: string) => ({ type: 'reply_part', seq, turn_id: 't1', part: n, text });
  const clientTurnIdOf = (ws: FakeSocket) => String(ws.sentOf('user_turn')[0]!.client_turn_id);

  it("hands the service's voice to the player, the browser's voice nothing; reports playback of a reply", async () => {
    const { client, ws, spoken, said, service } = await page(new TabStorage(), 0, 'service');
    client.say('Dinner?', 'voice');
    for (const frame of asked(clientTurnIdOf(ws), 'voice')) ws.receive(frame);
    ws.receive({ type: 'reply', seq: 3, turn_id: 't1', text: 'We serve dinner from 6. Book ahead!', actions: [] });
    const head = { type: 'speech', turn_id: 't1', sentence: 0, text: 'We serve dinner from 6.', sample_rate: 24000 };
    ws.receive(head);
    ws.receiveBinary(new ArrayBuffer(4800));
    ws.receive({ type: 'speech_end', turn_id: 't1', sentence: 0 });
    ws.receive({ type: 'speech_unavailable', turn_id: 't1', sentence: 1 });
    expect(service).toEqual([
      head,
      4800,
      { type: 'speech_end', turn_id: 't1', sentence: 0 },
      { type: 'speech_unavailable', turn_id: 't1', sentence: 1 },
    ]);
    // The browser's voice says nothing of a reply the service speaks (the player says what it could not).
    expect([spoken, said]).toEqual([[], []]);
    client.played({ turnId: 't1', sentence: 1 }, 'interrupted', 412.6);
    expect(ws.sentOf('playback')).toEqual([
      { type: 'playback', turn_id: 't1', sentence: 1, offset_ms: 413, state: 'interrupted' },
    ]);
  });

  it('numbers the sentences it hands the browser’s voice by their place in the reply', async () => {
    const { client, ws, said } = await page(new TabStorage());
    client.say('Dinner?', 'voice');
    for (const frame of asked(clientTurnIdOf(ws), 'voice')) ws.receive(frame);
    ws.receive(part(3, 0, 'We serve dinner from 6. It'));
    ws.receive({ type: 'reply', seq: 4, turn_id: 't1', text: 'We serve dinner from 6. It ends at 10.', actions: [] });
    expect(said).toEqual([
      { turnId: 't1', sentence: 0, text: 'We serve dinner from 6.' },
      { turnId: 't1', sentence: 1, text: 'It ends at 10.' },
    ]);
  });

  it('reads a voice turn’s reply sentence by sentence as the parts complete them, and never a sentence twice, even reworded', async () => {
    const { client, ws, spoken } = await page(new TabStorage());
    client.say('Dinner?', 'voice');
    for (const frame of asked(clientTurnIdOf(ws), 'voice')) ws.receive(frame);
    ws.receive(part(3, 0, 'We serve dinner from 6. It'));
    expect(spoken).toEqual(['We serve dinner from 6.']);
    // Part 2 before part 1: nothing more until the gap is filled.
    ws.receive(part(4, 2, 'Book ahead! '));
    expect(spoken).toEqual(['We serve dinner from 6.']);
    ws.receive(part(5, 1, ' ends at 10. '));
    expect(spoken).toEqual(['We serve dinner from 6.', 'It ends at 10.', 'Book ahead!']);
    ws.receive({
      type: 'reply',
      seq: 6,
      turn_id: 't1',
      text: 'Dinner is from 6 pm. It ends at 10. Book ahead! See you then.',
      actions: [],
    });
    expect(spoken).toEqual(['We serve dinner from 6.', 'It ends at 10.', 'Book ahead!', 'See you then.']);
  });

  it("reads a person's message out in the tab whose visitor last spoke, not in one that typed, nor on replay after a reload", async () => {
    const tab = new TabStorage();
    const speaking = await page(tab);
    const typing = await page(new TabStorage());
    speaking.client.say('Dinner?', 'voice');
    typing.client.say('Dinner?', 'text');
    const message = {
      type: 'message',
      seq: 3,
      text: 'Maria here. I will book it for you.',
      actions: [],
      name: 'Maria',
    };
    for (const { ws } of [speaking, typing]) for (const frame of [...asked('x', 'voice'), message]) ws.receive(frame);
    expect(speaking.spoken).toEqual(['Maria here.', 'I will book it for you.']);
    expect(typing.spoken).toEqual([]);
    speaking.client.stop();

    const reloaded = await page(tab, 3);
    for (const frame of [...asked('x', 'voice'), message]) reloaded.ws.receive(frame);
    expect(reloaded.spoken).toEqual([]);
  });

  it('goes on reading after a reload mid-reply from where it stopped; another tab reads nothing', async () => {
    const tab = new TabStorage();
    const first = await page(tab);
    first.client.say('Dinner?', 'voice');
    const frames = [...asked(clientTurnIdOf(first.ws), 'voice'), part(3, 0, 'One. Two')];
    for (const frame of frames) first.ws.receive(frame);
    expect(first.spoken).toEqual(['One.']);
    first.client.stop();

    const reloaded = await page(tab, 3);
    const other = await page(new TabStorage(), 3);
    for (const { ws } of [reloaded, other]) {
      for (const frame of frames) ws.receive(frame);
      ws.receive(part(4, 1, '. Three. '));
      ws.receive({ type: 'reply', seq: 5, turn_id: 't1', text: 'One. Two. Three. Four.', actions: [] });
    }
    expect(reloaded.spoken).toEqual(['Two.', 'Three.', 'Four.']);
    expect(other.spoken).toEqual([]);
  });

  it('reads nothing of a text turn’s reply', async () => {
    const { client, ws, spoken } = await page(new TabStorage());
    client.say('Dinner?', 'text');
    for (const frame of asked(clientTurnIdOf(ws), 'text')) ws.receive(frame);
    ws.receive({ type: 'reply', seq: 3, turn_id: 't1', text: 'From 6. Until 10.', actions: [] });
    expect(spoken).toEqual([]);
  });

  it('runs a client action without a label once, in the tab that asked and never on replay; a labelled one once, when clicked', async () => {
    const actions = [
      { type: 'client', name: 'show_rooms', args: { floor: 2 } },
      { type: 'client', name: 'open_menu', label: 'Menu' },
    ];
    const tab = new TabStorage();
    const asking = await page(tab);
    const watching = await page(new TabStorage());
    asking.client.say('Rooms?', 'text');
    const frames = [
      ...asked(clientTurnIdOf(asking.ws), 'text'),
      { type: 'reply', seq: 3, turn_id: 't1', text: 'Here.', actions },
    ];
    for (const { ws } of [asking, watching]) for (const frame of frames) ws.receive(frame);
    expect(asking.ran).toEqual(['show_rooms@t1']);
    expect(watching.ran).toEqual([]);

    // Clicks name the reply's line (a person's message has no turn).
    const line = watching.client.view.lines.find((l) => l.turnId === 't1' && l.who === 'agent')!.key;
    watching.client.runAction(line, 1);
    watching.client.runAction(line, 1);
    // Not a labelled client action: nothing to run.
    watching.client.runAction(line, 0);
    expect(watching.ran).toEqual(['open_menu@t1']);
    expect(watching.client.actionRan(line, 1)).toBe(true);

    asking.client.stop();
    const reloaded = await page(tab, 3);
    for (const frame of frames) reloaded.ws.receive(frame);
    expect(reloaded.ran).toEqual([]);
  });
});
