import { describe, expect, it } from 'vitest';
import { readActivity } from '../../../test/activity-reader.js';
import { deploy, mintToken, serviceWithCustomer, Widget } from '../../../test/concierge-kit.js';
import { describeEachStore, waitFor } from '../../../test/harness.js';
import { LocalBus } from '../events/conversation-bus.js';
import { ACTIVITY_DEFAULTS, ActivityHub } from './activity.hub.js';

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
    expect((await mine.api.post(`/api/v1/conversations/${conversation_id}/takeover`, { name: 'Maria' })).status).toBe(200);

    await waitFor(async () => reader.messages.some((m) => m.event === 'handoff'));
    expect(reader.messages.map((m) => [m.event ?? 'message', m.data.conversation_id, m.data.event?.type ?? m.data.handler])).toEqual([
      ['message', conversation_id, 'turn_accepted'],
      ['message', conversation_id, 'turn_acknowledged'],
      ['message', conversation_id, 'operator_joined'],
      ['handoff', conversation_id, 'person'],
    ]);
    expect(reader.messages[0]!.data).toMatchObject({ deployment_id: mine.deploymentId, event: { type: 'turn_accepted', seq: 1, text: 'Breakfast?' } });
    expect(reader.messages[3]!.data).toEqual({ conversation_id, deployment_id: mine.deploymentId, handler: 'person', name: 'Maria', needs_person: false, reason: null });
    for (const m of reader.messages) expect(m.id).toMatch(/^\d+-[0-9a-f-]{36}-(\d+|h)$/);
    expect(reader.raw[0]).toBe('retry: 2000');
    await reader.stop();

    // Away for a while: a message is written, then the reader comes back from its last event.
    const lastSeen = reader.messages[1]!.id!;
    expect((await mine.api.post(`/api/v1/conversations/${conversation_id}/messages`, { text: 'Hello, Maria here.', name: 'Maria' })).status).toBe(200);
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
    expect((await mine.api.post('/api/v1/settings/api-key/rotate')).status).toBe(200);
    await waitFor(async () => ended, 3_000, 'the stream to end');
    expect((await fetch(`${service().url}/api/v1/activity`, { headers: { authorization: `Bearer ${mine.apiKey}` } })).status).toBe(401);
  });

  it('needs a key or the console cookie', async () => {
    const res = await fetch(`${service().url}/api/v1/activity`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
  });
});

describe("a customer's readers on one node", () => {
  it('keeps a new reader fed when an earlier one finishes leaving after it came', async () => {
    const hub = new ActivityHub({ db: undefined as never, bus: new LocalBus(), health: undefined as never }, { ...ACTIVITY_DEFAULTS, otherNodes: false });
    const first = new AbortController();
    const a = await hub.open('customer-1', undefined, first.signal);
    expect(String((await a.next()).value)).toBe('retry: 2000\n\n');
    first.abort();
    const b = await hub.open('customer-1', undefined, new AbortController().signal);
    expect(String((await b.next()).value)).toBe('retry: 2000\n\n');
    // The first reader's stream ends only now: its leaving must not take the second's feed with it.
    await a.return(undefined);
    const conversationId = '6f1d0c3e-9a0b-4d7e-8f5a-2b3c4d5e6f70';
    hub.committed([{ customerId: 'customer-1', deploymentId: 'd', conversationId, tallies: [], frames: [{ seq: 1, type: 'greeting', frame: '{"type":"greeting","seq":1,"text":"Hi"}' }] }]);
    const next = await b.next();
    expect(String(next.value)).toMatch(new RegExp(`^id: \\d+-${conversationId}-1\\ndata: \\{"conversation_id":"${conversationId}","deployment_id":"d","event":\\{"type":"greeting","seq":1,"text":"Hi"\\}\\}\\n\\n$`));
    await b.return(undefined);
  });
  it('says something every heartbeat to a quiet reader, and only to a quiet one', async () => {
    const hub = new ActivityHub({ db: undefined as never, bus: new LocalBus(), health: undefined as never }, { ...ACTIVITY_DEFAULTS, otherNodes: false, heartbeatMs: 50 });
    hub.start();
    const quiet = await hub.open('customer-2', undefined, new AbortController().signal);
    expect(String((await quiet.next()).value)).toBe('retry: 2000\n\n');
    const started = Date.now();
    expect(String((await quiet.next()).value)).toBe(': keep-alive\n\n');
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    await quiet.return(undefined);
    await hub.stop();
  });

  it('drops a reader that stops taking messages once it is more than maxUnsentBytes behind, while one that reads gets every message', async () => {
    const hub = new ActivityHub({ db: undefined as never, bus: new LocalBus(), health: undefined as never }, { ...ACTIVITY_DEFAULTS, otherNodes: false, maxUnsentBytes: 4096 });
    const reading = await hub.open('customer-3', undefined, new AbortController().signal);
    const slow = await hub.open('customer-3', undefined, new AbortController().signal);
    for (const reader of [reading, slow]) expect(String((await reader.next()).value)).toBe('retry: 2000\n\n');
    const conversationId = '0b6c3a52-4f3e-4d0a-9b8e-1f2a3b4c5d6e';
    const text = 'x'.repeat(1000);
    for (let seq = 1; seq <= 5; seq++) {
      hub.committed([{ customerId: 'customer-3', deploymentId: 'd', conversationId, tallies: [], frames: [{ seq, type: 'message', frame: JSON.stringify({ type: 'message', seq, text }) }] }]);
      expect(String((await reading.next()).value)).toContain(`"seq":${seq},`);
    }
    // Five 1 kB events pass 4 kB: the slow reader ends without them, and resumes with Last-Event-ID.
    expect(await slow.next()).toEqual({ done: true, value: undefined });
    await reading.return(undefined);
  });

  it('hands a reader what reached it within the flush window in one piece', async () => {
    const hub = new ActivityHub({ db: undefined as never, bus: new LocalBus(), health: undefined as never }, { ...ACTIVITY_DEFAULTS, otherNodes: false, flushEveryMs: 30 });
    const reader = await hub.open('customer-4', undefined, new AbortController().signal);
    expect(String((await reader.next()).value)).toBe('retry: 2000\n\n');
    const conversationId = '5d6e7f80-1a2b-4c3d-8e9f-0a1b2c3d4e5f';
    // The client waits for its next piece, as the route's writer does.
    const next = reader.next();
    const started = Date.now();
    for (let seq = 1; seq <= 3; seq++) hub.committed([{ customerId: 'customer-4', deploymentId: 'd', conversationId, tallies: [], frames: [{ seq, type: 'greeting', frame: JSON.stringify({ type: 'greeting', seq, text: 'Hi' }) }] }]);
    const piece = String((await next).value);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(piece.match(/^id: /gm)).toHaveLength(3);
    await reader.return(undefined);
  });
});
