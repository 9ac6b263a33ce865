import { describe, expect, it } from 'vitest';
import { deploy, mintToken, postReply, serviceWithCustomer, Widget } from '../../../test/concierge-kit.js';
import { describeEachStore, expectError, waitFor } from '../../../test/harness.js';
import { pathGlob } from '#protocol/page-rules';
import type { ConversationRow } from '../conversations/conversation.repository.js';
import type { TurnRow } from '../conversations/turn.repository.js';
import type { DeploymentContext } from '../../deployments/deployment-context.js';
import { dataMessage, systemMessage } from '../models/model-prompt.js';
import { PAGE_EVENTS_PER_CONVERSATION } from './page.service.js';
import { PAGE_MESSAGES_PER_MINUTE } from '../sessions/page-messages.js';

const rooms = {
  id: 'rooms',
  when: { path: '/rooms/**', seconds_on_page: 20 },
  teaser: { en: 'Questions about our rooms?', de: 'Fragen zu unseren Zimmern?' },
};
const leaving = { id: 'leaving', when: { exit_intent: true }, teaser: 'Before you go…', once_per: 'session' };

describe('a path glob (README, Greeting visitors first)', () => {
  it('matches whole paths: * within a segment, ** across them', () => {
    const match = (glob: string, path: string) => pathGlob(glob)!.test(path);
    expect(match('/rooms/*', '/rooms/deluxe')).toBe(true);
    expect(match('/rooms/*', '/rooms/deluxe/photos')).toBe(false);
    expect(match('/rooms/**', '/rooms/deluxe/photos')).toBe(true);
    expect(match('/rooms*', '/rooms.html')).toBe(true);
    expect(match('/rooms', '/rooms/')).toBe(false);
    expect(match('/a.b', '/aXb')).toBe(false);
    expect(match('/(x)', '/(x)')).toBe(true);
    for (const bad of ['rooms/*', '/rooms?x=1', '/a b', '/***', '', `/${'a'.repeat(200)}`])
      expect(pathGlob(bad), bad).toBeUndefined();
    expect(match('/**a**b', '/xaybz')).toBe(false);
    expect(match('/**a**b', '/xayb')).toBe(true);
    expect(match('/*/*.html', '/rooms/deluxe.html')).toBe(true);
    expect(match('/*/*.html', '/rooms/a/deluxe.html')).toBe(false);
  });

  it('reads a path once whatever stars the glob holds (ten ** held a tab 9 s)', () => {
    const glob = pathGlob(`/${'**a'.repeat(10)}b`)!;
    const started = performance.now();
    expect(glob.test(`/${'a'.repeat(2_000)}`)).toBe(false);
    expect(performance.now() - started).toBeLessThan(200);
  });
});

describe('the model is told the page (README, Greeting visitors first)', () => {
  it('names the page, its context and the events since the last turn in a message of data, never in the system message', () => {
    const dep = {
      agent: { language: 'en-US' },
      spec: { prompt: { persona: 'You are the front desk.', instructions: '' }, guardrails: { injection: true } },
    } as unknown as DeploymentContext;
    const page = {
      url: 'https://hotel.example/book',
      title: 'Book a room',
      context: { basket: ['deluxe'] },
      events: [{ name: 'dates_chosen', data: { nights: 3 }, at: '2026-11-27T09:59:00.000Z' }],
    };
    const system = systemMessage(
      dep,
      { user_name: null, user_ctx: null } as ConversationRow,
      { language: 'en-US' } as TurnRow,
      new Date('2026-11-27T10:00:00Z'),
    );
    expect(system).not.toContain('hotel.example');
    expect(system).toContain('A message that starts with [Data] holds what the visitor');
    expect(dataMessage({ page })).toEqual({
      role: 'user',
      content:
        '[Data] {"page":{"url":"https://hotel.example/book","title":"Book a room","context":{"basket":["deluxe"]},"events_since_last_message":[{"name":"dates_chosen","data":{"nights":3}}]}}',
    });
    expect(dataMessage({ page: { url: null, title: null, context: null, events: [] } })).toBeUndefined();
  });
});

describeEachStore('greeting visitors first and the page (README, Greeting visitors first)', (kind) => {
  const { service, customer } = serviceWithCustomer(kind);

  it('refuses rules it could not follow, naming the field in plain words, and keeps the ones it can', async () => {
    const { api, deploymentId } = await deploy(service(), { hook_url: customer().hookUrl });
    const cases: [unknown, string, string][] = [
      [[{ ...rooms, when: { seconds: 20 } }], 'engagement_rules.proactive.0.when', 'Unrecognized key: "seconds"'],
      [[{ ...rooms, when: { path: 'rooms/*' } }], 'engagement_rules.proactive.0.when.path', 'must be a path glob'],
      [[{ ...rooms, when: {} }], 'engagement_rules.proactive.0.when', 'must hold at least one condition'],
      [[rooms, rooms], 'engagement_rules.proactive', 'must not use a rule id twice'],
      [
        Array.from({ length: 21 }, (_, i) => ({ ...rooms, id: `r${i}` })),
        'engagement_rules.proactive',
        'must hold at most 20 rules',
      ],
      [[{ ...rooms, teaser: { 'not a tag!': 'Hi' } }], 'engagement_rules.proactive.0.teaser', 'language tags'],
      [[{ ...rooms, teaser: '' }], 'engagement_rules.proactive.0.teaser', 'must be 1 to 200 characters'],
      [[{ ...rooms, once_per: 'day' }], 'engagement_rules.proactive.0.once_per', 'expected one of "visitor"|"session"'],
    ];
    for (const [proactive, path, message] of cases) {
      const res = await api.put(`/api/v1/deployments/${deploymentId}`, { engagement_rules: { proactive } });
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details, path).toContainEqual({ path, message: expect.stringContaining(message) });
    }
    const saved = await api.put(`/api/v1/deployments/${deploymentId}`, {
      engagement_rules: { max_pending_turns: 2, proactive: [rooms, leaving] },
    });
    expect(saved.status).toBe(200);
    expect(saved.body.data.engagement_rules).toEqual({ max_pending_turns: 2, proactive: [rooms, leaving] });
    expect(saved.body.meta?.warnings ?? []).toEqual([]);
  });

  it('hands the widget its rules, and counts each rule: shown, opened, the conversations it started and their turns', async () => {
    const { api, deploymentId, secret } = await deploy(
      service(),
      { hook_url: customer().hookUrl },
      { engagement_rules: { proactive: [rooms, leaving] } },
    );
    const visit = async (sub: string) => {
      const widget = await Widget.open(service(), deploymentId);
      const ready = await widget.hello(await mintToken(secret, deploymentId, { sub }));
      return { widget, ready };
    };
    const ask = async (widget: Widget, id: string) => {
      widget.send({ type: 'user_turn', client_turn_id: id, text: `Question ${id}`, mode: 'text' });
      return (await widget.next('turn_acknowledged')).turn_id as string;
    };
    const ada = await visit('ada');
    expect(ada.ready.proactive).toEqual([rooms, leaving]);
    ada.widget.send({ type: 'proactive', rule_id: 'rooms', event: 'shown' });
    ada.widget.send({ type: 'proactive', rule_id: 'rooms', event: 'opened' });
    // A rule the deployment does not have counts nothing.
    ada.widget.send({ type: 'proactive', rule_id: 'gone', event: 'shown' });
    const first = await ask(ada.widget, 'a1');
    await postReply(
      service(),
      deploymentId,
      { conversation_id: ada.ready.conversation_id, turn_id: first, reply_text: 'From 7.' },
      secret,
    );
    await ask(ada.widget, 'a2');
    // Shown to Bob, who never spoke; Cleo spoke before the teaser: her turns are not the rule's.
    const bob = await visit('bob');
    bob.widget.send({ type: 'proactive', rule_id: 'leaving', event: 'shown' });
    const cleo = await visit('cleo');
    await ask(cleo.widget, 'c1');
    cleo.widget.send({ type: 'proactive', rule_id: 'rooms', event: 'shown' });
    await ask(cleo.widget, 'c2');

    const day = new Date().toISOString().slice(0, 10);
    const next = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const figures = await waitFor(async () => {
      const res = await api.get(`/api/v1/analytics?from=${day}&to=${next}&deployment_id=${deploymentId}`);
      const all = res.body.data.totals.proactive as { rule_id: string; shown: number }[];
      return all.length === 2 && all.find((r) => r.rule_id === 'rooms')?.shown === 2 ? res.body.data : undefined;
    });
    const byRule = (list: { rule_id: string }[]) => [...list].sort((a, b) => a.rule_id.localeCompare(b.rule_id));
    expect(byRule(figures.totals.proactive)).toEqual([
      { deployment_id: deploymentId, rule_id: 'leaving', shown: 1, opened: 0, conversations: 0, turns: 0 },
      { deployment_id: deploymentId, rule_id: 'rooms', shown: 2, opened: 1, conversations: 1, turns: 2 },
    ]);
    expect(byRule(figures.buckets[0].proactive)).toEqual(byRule(figures.totals.proactive));
    // The conversations themselves are counted as ever.
    expect(figures.totals).toMatchObject({ conversations: 3, turns: 4 });
    for (const v of [ada, bob, cleo]) v.widget.close();
  });

  it("stores the page's events for the next turn, tells the transcript hook, and bounds what a page may send", async () => {
    const { deploymentId, secret } = await deploy(service(), {
      hook_url: customer().hookUrl,
      transcript_hook_url: customer().transcriptUrl,
    });
    const widget = await Widget.open(service(), deploymentId);
    const { conversation_id } = await widget.hello(await mintToken(secret, deploymentId));
    widget.send({ type: 'page_event', name: 'basket.added', data: { sku: 'deluxe', nights: 2 } });
    // Never shown to the visitor, but replayed in order like every stored event.
    expect(await widget.next('page_event')).toEqual({
      type: 'page_event',
      seq: expect.any(Number),
      name: 'basket.added',
      data: { sku: 'deluxe', nights: 2 },
    });
    const told = await waitFor(async () => customer().transcript.find((c) => c.body.type === 'page.event'));
    expect(told.body).toMatchObject({
      conversation_id,
      data: { name: 'basket.added', data: { sku: 'deluxe', nights: 2 } },
    });

    const big = { text: 'x'.repeat(4100) };
    for (const [frame, says] of [
      [{ type: 'page_event', name: 'big', data: big }, 'data must be at most 4096 bytes as JSON'],
      [{ type: 'context', data: big }, 'data must be at most 4096 bytes as JSON'],
      [{ type: 'context', data: [1, 2] }, 'data Invalid input: expected record, received array'],
      [{ type: 'page_event', name: 'no spaces please' }, 'name must be 1 to 64 of'],
    ] as const) {
      widget.send(frame);
      const error = await widget.next('error');
      expect(error.code).toBe('invalid_message');
      expect(error.message).toContain(says);
    }
    // The event above was the first of the minute; what failed to parse is not counted.
    for (let i = 1; i < PAGE_MESSAGES_PER_MINUTE; i++) widget.send({ type: 'context', data: { step: i } });
    widget.send({ type: 'page_event', name: 'one.too.many' });
    expect(await widget.next('error')).toEqual({
      type: 'error',
      code: 'rate_limited',
      message: `At most ${PAGE_MESSAGES_PER_MINUTE} page events a minute`,
    });
    // The socket stays open and takes turns as before.
    widget.send({ type: 'user_turn', client_turn_id: 't1', text: 'Still there?', mode: 'text' });
    await widget.next('turn_acknowledged');
    const hook = await waitFor(async () => customer().calls.find((c) => c.body.conversation_id === conversation_id));
    expect(hook.body.page).toEqual({
      url: null,
      title: null,
      context: { step: PAGE_MESSAGES_PER_MINUTE - 1 },
      events: [{ name: 'basket.added', data: { sku: 'deluxe', nights: 2 }, at: expect.any(String) }],
    });
    widget.close();
  });

  it('bounds the page events of a conversation, however many sockets its page opens', async () => {
    const { deploymentId, secret } = await deploy(service(), { hook_url: customer().hookUrl });
    const token = await mintToken(secret, deploymentId);
    const first = await Widget.open(service(), deploymentId);
    const { conversation_id } = await first.hello(token);
    const sockets = [first];
    for (let i = 1; i < 3; i++) {
      const widget = await Widget.open(service(), deploymentId);
      await widget.hello(token, { conversation_id });
      sockets.push(widget);
    }
    // 30 from each of three sockets: each stays within its own 60 a minute, the conversation does not.
    for (const widget of sockets) for (let i = 0; i < 30; i++) widget.send({ type: 'page_event', name: `e${i}` });
    const refusals = await waitFor(async () => {
      const errors = sockets.flatMap((w) => w.frames.filter((f) => f.type === 'error'));
      return errors.length === 30 ? errors : undefined;
    }, 10_000);
    expect(new Set(refusals.map((e) => `${e.code}: ${e.message}`))).toEqual(
      new Set([
        `rate_limited: A conversation takes at most ${PAGE_EVENTS_PER_CONVERSATION.perMinute} page events a minute`,
      ]),
    );
    const stored = await service()
      .app.store.db.selectFrom('conversation_events')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('conversation_id', '=', conversation_id)
      .where('type', '=', 'page_event')
      .executeTakeFirstOrThrow();
    expect(Number(stored.n)).toBe(PAGE_EVENTS_PER_CONVERSATION.perMinute);
    for (const widget of sockets) widget.close();
  });
});
