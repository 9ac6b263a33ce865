import { describe, expect, it } from 'vitest';
import { readActivity } from '../../../test/activity-reader.js';
import { deploy, mintToken, serviceWithCustomer, Widget } from '../../../test/concierge-kit.js';
import { describeEachStore, waitFor } from '../../../test/harness.js';
import { LocalBus } from '../events/conversation-bus.js';
import { ActivityHub } from './activity.hub.js';
import { ACTIVITY_DEFAULTS } from './activity-settings.js';

/** README, A person in the conversation: the activity stream. */
describeEachStore('the activity stream', (kind) => {
  const { service, customer } = serviceWithCustomer(kind, { activityRecheckMs: 100 });

  it("carries every stored event of the customer's conversations and their handoffs, live; resumes with Last-Event-ID; never another customer's", async () => {
    const mine = await deploy(service(), { hook_url: customer().hookUrl });
    const theirs = await deploy(service(), { hook_url: customer().hookUrl });
    const bearer = { authorization: `Bearer ${mine.apiKey}` };
    const reader = await readActivity(service().url, bearer);
    expect(reader.res.status).toBe(200);
    expect(reader.res.headers.get('content-type')).toBe('text/event-stream');
    expect(reader.res.headers.get('cache-control')).toBe('no-store');

    const widget = await Widget.open(service(), mine.deploymentId);
    const { conversation_id } = await widget.hello(await mintToken(mine.secret, mine.deploymentId));
    const stranger = await Widget.open(service(), theirs.deploymentId);
    await stranger.hello(await mintToken(theirs.secret, theirs.deploymentId));
    stranger.send({ type: 'user_turn', client_turn_id: 's', text: 'Not for you', mode: 'text' });
    widget.send({ type: 'user_turn', client_turn_id: 'm', text: 'Breakfast?', mode: 'text' });
    await widget.next('turn_acknowledged');
    await stranger.next('turn_acknowledged');
    expect((await mine.api.post(`/api/v1/conversations/${conversation_id}/takeover`, { name: 'Maria' })).status).toBe(
      200,
    );

    await waitFor(async () => reader.messages.some((m) => m.event === 'handoff'));
    expect(
      reader.messages.map((m) => [m.event ?? 'message', m.data.conversation_id, m.data.event?.type ?? m.data.handler]),
    ).toEqual([
      ['message', conversation_id, 'turn_accepted'],
      ['message', conversation_id, 'turn_acknowledged'],
      ['message', conversation_id, 'operator_joined'],
      ['handoff', conversation_id, 'person'],
    ]);
    expect(reader.messages[0]!.data).toMatchObject({
      deployment_id: mine.deploymentId,
      event: { type: 'turn_accepted', seq: 1, text: 'Breakfast?' },
    });
    expect(reader.messages[3]!.data).toEqual({
      conversation_id,
      deployment_id: mine.deploymentId,
      handler: 'person',
      name: 'Maria',
      needs_person: false,
      reason: null,
    });
    for (const m of reader.messages) expect(m.id).toMatch(/^\d+-[0-9a-f-]{36}-(\d+|h)$/);
    expect(reader.raw[0]).toBe('retry: 2000');
    await reader.stop();

    // Away for a while: a message is written, then the reader comes back from its last event.
    const lastSeen = reader.messages[1]!.id!;
    expect(
      (
        await mine.api.post(`/api/v1/conversations/${conversation_id}/messages`, {
          text: 'Hello, Maria here.',
          name: 'Maria',
        })
      ).status,
    ).toBe(200);
    const resumed = await readActivity(service().url, { ...bearer, 'last-event-id': lastSeen });
    await waitFor(async () => resumed.messages.some((m) => m.data.event?.type === 'message'));
    const types = resumed.messages.map((m) => m.data.event?.type ?? `handoff:${m.data.handler}`);
    expect(types).not.toContain('turn_accepted');
    expect(types.filter((t) => t === 'operator_joined' || t === 'message')).toEqual(['operator_joined', 'message']);
    expect(types).toContain('handoff:person');
    expect(resumed.messages.every((m) => m.data.conversation_id === conversation_id)).toBe(true);
    await resumed.stop();
    widget.close();
    stranger.close();
  });

  it('ends within its recheck once its key is revoked, and not while the key holds', async () => {
    const mine = await deploy(service(), { hook_url: customer().hookUrl });
    const reader = await readActivity(service().url, { authorization: `Bearer ${mine.apiKey}` });
    expect(reader.res.status).toBe(200);
    let ended = false;
    void reader.ended.then(() => (ended = true));
    await new Promise((r) => setTimeout(r, 500));
    expect(ended).toBe(false);
    expect((await mine.api.post('/api/v1/settings/api-key/rotate', { grace_period_s: 0 })).status).toBe(200);
    await waitFor(async () => ended, 3_000, 'the stream to end');
    expect(
      (await fetch(`${service().url}/api/v1/activity`, { headers: { authorization: `Bearer ${mine.apiKey}` } })).status,
    ).toBe(401);
  });

  it('holds at most 10 streams per API key on a node: the 11th is 429 with Retry-After, and one closed makes room', async () => {
    const mine = await deploy(service(), { hook_url: customer().hookUrl });
    const bearer = { authorization: `Bearer ${mine.apiKey}` };
    const readers = [];
    for (let i = 0; i < 10; i++) {
      const reader = await readActivity(service().url, bearer);
      expect(reader.res.status).toBe(200);
      readers.push(reader);
    }
    const refused = await fetch(`${service().url}/api/v1/activity`, { headers: bearer });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'rate_limited',
      message: expect.stringContaining('this API key (10)'),
    });
    // Another customer is not affected.
    const other = await deploy(service(), { hook_url: customer().hookUrl });
    const theirs = await readActivity(service().url, { authorization: `Bearer ${other.apiKey}` });
    expect(theirs.res.status).toBe(200);
    await theirs.stop();
    await readers.pop()!.stop();
    await waitFor(async () => {
      const again = await readActivity(service().url, bearer);
      if (again.res.status !== 200) return false;
      readers.push(again);
      return true;
    });
    for (const reader of readers) await reader.stop();
  });

  it('needs a key or the console cookie', async () => {
    const res = await fetch(`${service().url}/api/v1/activity`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
  });
});

describeEachStore('a resume further behind than a reader may hold', (kind) => {
  const { service, customer } = serviceWithCustomer(kind, { activity: { maxUnsentBytes: 8192 } });

  it('is told to resync instead of being dropped and brought back for the same catch-up, and resumes from the resync after it', async () => {
    const mine = await deploy(service(), { hook_url: customer().hookUrl });
    const bearer = { authorization: `Bearer ${mine.apiKey}` };
    const widget = await Widget.open(service(), mine.deploymentId);
    const { conversation_id } = await widget.hello(await mintToken(mine.secret, mine.deploymentId));
    const first = await readActivity(service().url, bearer);
    expect(
      (await mine.api.post(`/api/v1/conversations/${conversation_id}/messages`, { text: 'First.', name: 'Maria' }))
        .status,
    ).toBe(200);
    await waitFor(async () => first.messages.length > 0);
    const lastSeen = first.messages.at(-1)!.id!;
    await first.stop();
    // Away while 10 KB are written: more than half of what a reader may hold.
    for (let i = 0; i < 10; i++)
      expect(
        (
          await mine.api.post(`/api/v1/conversations/${conversation_id}/messages`, {
            text: `${i} ${'x'.repeat(1000)}`,
            name: 'Maria',
          })
        ).status,
      ).toBe(200);

    const behind = await readActivity(service().url, { ...bearer, 'last-event-id': lastSeen });
    await waitFor(async () => behind.messages.length > 0);
    expect(behind.messages[0]).toEqual({
      id: expect.stringMatching(/^\d+-resync$/),
      event: 'resync',
      data: { reason: 'too_far_behind' },
    });
    expect(behind.messages).toHaveLength(1);
    // Still open and live: what is written now comes.
    expect(
      (await mine.api.post(`/api/v1/conversations/${conversation_id}/messages`, { text: 'Live.', name: 'Maria' }))
        .status,
    ).toBe(200);
    await waitFor(async () => behind.messages.some((m) => m.data.event?.text === 'Live.'));
    await behind.stop();
    // Reconnecting from the resync's id reads from there: no resync again, and nothing from before it.
    const again = await readActivity(service().url, { ...bearer, 'last-event-id': behind.messages[0]!.id! });
    expect(
      (await mine.api.post(`/api/v1/conversations/${conversation_id}/messages`, { text: 'Later.', name: 'Maria' }))
        .status,
    ).toBe(200);
    await waitFor(async () => again.messages.some((m) => m.data.event?.text === 'Later.'));
    expect(again.messages.filter((m) => m.event === 'resync')).toEqual([]);
    expect(again.messages.some((m) => String(m.data.event?.text ?? '').endsWith('x'.repeat(1000)))).toBe(false);
    await again.stop();
    widget.close();
  });
});

describe("a customer's readers on one node", () => {
  const hubWith = (settings: Partial<typeof ACTIVITY_DEFAULTS>) =>
    new ActivityHub(
      { db: undefined as never, bus: new LocalBus(), health: undefined as never },
      { ...ACTIVITY_DEFAULTS, ...settings, otherNodes: false },
    );

  it('holds at most streamsPerPrincipal per key or user and streamsPerCustomer per customer; a stream that ends gives its place back', async () => {
    const hub = hubWith({ streamsPerCustomer: 3, streamsPerPrincipal: 2 });
    const left = new AbortController();
    const open = (principal: string, signal = new AbortController().signal) =>
      hub.open('customer-9', principal, undefined, signal);
    await open('key-1', left.signal);
    await open('key-1');
    await expect(open('key-1')).rejects.toMatchObject({
      code: 'rate_limited',
      retryAfterS: 5,
      message: expect.stringContaining('this API key (2)'),
    });
    await open('user:ana', left.signal);
    await expect(open('user:ben')).rejects.toMatchObject({
      code: 'rate_limited',
      message: expect.stringContaining('this customer (3)'),
    });
    // Another customer has places of its own.
    await hub.open('customer-10', 'key-2', undefined, new AbortController().signal);
    left.abort();
    await open('user:ben');
    await open('key-1');
  });

  it('speaks to a reader within heartbeatMs of the last thing it was sent, also right after traffic', async () => {
    const hub = hubWith({ heartbeatMs: 300 });
    hub.start();
    const reader = await hub.open('customer-11', 'key-1', undefined, new AbortController().signal);
    expect(String((await reader.next()).value)).toBe('retry: 2000\n\n');
    expect(String((await reader.next()).value)).toBe(': keep-alive\n\n');
    // An event just after a beat: the next comment comes within a heartbeat of it, not two.
    const conversationId = '7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d';
    hub.committed([
      {
        customerId: 'customer-11',
        deploymentId: 'd',
        conversationId,
        tallies: [],
        frames: [{ seq: 1, type: 'greeting', frame: '{"type":"greeting","seq":1,"text":"Hi"}' }],
      },
    ]);
    expect(String((await reader.next()).value)).toContain('"greeting"');
    const sent = Date.now();
    expect(String((await reader.next()).value)).toBe(': keep-alive\n\n');
    expect(Date.now() - sent).toBeLessThan(450);
    await reader.return(undefined);
    await hub.stop();
  });

  it('keeps a new reader fed when an earlier one finishes leaving after it came', async () => {
    const hub = new ActivityHub(
      { db: undefined as never, bus: new LocalBus(), health: undefined as never },
      { ...ACTIVITY_DEFAULTS, otherNodes: false },
    );
    const first = new AbortController();
    const a = await hub.open('customer-1', 'key-1', undefined, first.signal);
    expect(String((await a.next()).value)).toBe('retry: 2000\n\n');
    first.abort();
    const b = await hub.open('customer-1', 'key-1', undefined, new AbortController().signal);
    expect(String((await b.next()).value)).toBe('retry: 2000\n\n');
    // The first reader's stream ends only now: its leaving must not take the second's feed with it.
    await a.return(undefined);
    const conversationId = '6f1d0c3e-9a0b-4d7e-8f5a-2b3c4d5e6f70';
    hub.committed([
      {
        customerId: 'customer-1',
        deploymentId: 'd',
        conversationId,
        tallies: [],
        frames: [{ seq: 1, type: 'greeting', frame: '{"type":"greeting","seq":1,"text":"Hi"}' }],
      },
    ]);
    const next = await b.next();
    expect(String(next.value)).toMatch(
      new RegExp(
        `^id: \\d+-${conversationId}-1\\ndata: \\{"conversation_id":"${conversationId}","deployment_id":"d","event":\\{"type":"greeting","seq":1,"text":"Hi"\\}\\}\\n\\n$`,
      ),
    );
    await b.return(undefined);
  });
  it('says something every heartbeat to a quiet reader, and only to a quiet one', async () => {
    const hub = new ActivityHub(
      { db: undefined as never, bus: new LocalBus(), health: undefined as never },
      { ...ACTIVITY_DEFAULTS, otherNodes: false, heartbeatMs: 50 },
    );
    hub.start();
    const quiet = await hub.open('customer-2', 'key-1', undefined, new AbortController().signal);
    expect(String((await quiet.next()).value)).toBe('retry: 2000\n\n');
    const started = Date.now();
    expect(String((await quiet.next()).value)).toBe(': keep-alive\n\n');
    // Within a heartbeat of the last thing sent, and not long before it: the readers are looked at five times a heartbeat.
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);
    await quiet.return(undefined);
    await hub.stop();
  });

  it('drops a reader that stops taking messages once it is more than maxUnsentBytes behind, while one that reads gets every message', async () => {
    const hub = new ActivityHub(
      { db: undefined as never, bus: new LocalBus(), health: undefined as never },
      { ...ACTIVITY_DEFAULTS, otherNodes: false, maxUnsentBytes: 4096 },
    );
    const reading = await hub.open('customer-3', 'key-1', undefined, new AbortController().signal);
    const slow = await hub.open('customer-3', 'key-1', undefined, new AbortController().signal);
    for (const reader of [reading, slow]) expect(String((await reader.next()).value)).toBe('retry: 2000\n\n');
    const conversationId = '0b6c3a52-4f3e-4d0a-9b8e-1f2a3b4c5d6e';
    const text = 'x'.repeat(1000);
    for (let seq = 1; seq <= 5; seq++) {
      hub.committed([
        {
          customerId: 'customer-3',
          deploymentId: 'd',
          conversationId,
          tallies: [],
          frames: [{ seq, type: 'message', frame: JSON.stringify({ type: 'message', seq, text }) }],
        },
      ]);
      expect(String((await reading.next()).value)).toContain(`"seq":${seq},`);
    }
    // Five 1 kB events pass 4 kB: the slow reader ends without them, and resumes with Last-Event-ID.
    expect(await slow.next()).toEqual({ done: true, value: undefined });
    await reading.return(undefined);
  });

  it('hands a reader what reached it within the flush window in one piece', async () => {
    const hub = new ActivityHub(
      { db: undefined as never, bus: new LocalBus(), health: undefined as never },
      { ...ACTIVITY_DEFAULTS, otherNodes: false, flushEveryMs: 30 },
    );
    const reader = await hub.open('customer-4', 'key-1', undefined, new AbortController().signal);
    expect(String((await reader.next()).value)).toBe('retry: 2000\n\n');
    const conversationId = '5d6e7f80-1a2b-4c3d-8e9f-0a1b2c3d4e5f';
    // The client waits for its next piece, as the route's writer does.
    const next = reader.next();
    const started = Date.now();
    for (let seq = 1; seq <= 3; seq++)
      hub.committed([
        {
          customerId: 'customer-4',
          deploymentId: 'd',
          conversationId,
          tallies: [],
          frames: [{ seq, type: 'greeting', frame: JSON.stringify({ type: 'greeting', seq, text: 'Hi' }) }],
        },
      ]);
    const piece = String((await next).value);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(piece.match(/^id: /gm)).toHaveLength(3);
    await reader.return(undefined);
  });
});
