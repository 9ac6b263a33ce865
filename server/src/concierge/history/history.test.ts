import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  type CustomerServer,
  deploy,
  type Deployed,
  headerOf,
  mintToken,
  postReply,
  startCustomerServer,
  Widget,
} from '../../../test/concierge-kit.js';
import {
  client,
  describeEachStore,
  expectError,
  type TestService,
  startService,
  waitFor,
} from '../../../test/harness.js';

/**
 * The conversation history (README, The management API) over a real service and a real customer server: what
 * the list, the detail, the export and the erasure show of conversations that went every way.
 */
describeEachStore('conversation history', (kind) => {
  let service: TestService;
  let customer: CustomerServer;
  let hotel: Deployed;
  /** The conversation every test reads: a synchronous answer, a deferred one sent twice, and a hook that kept failing. */
  let story: { conversationId: string; frames: unknown[]; turns: Record<'sync' | 'deferred' | 'failing', string> };
  let quiet: string;

  beforeAll(async () => {
    service = await startService(kind, { sessions: { hookRetryDelaysMs: [10, 10] } });
    customer = await startCustomerServer((call, res) => {
      const text: string = call.body.text ?? '';
      if (text.startsWith('Sync'))
        return res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ reply_text: 'The pool opens at 7.' }));
      if (text.startsWith('Broken')) return res.writeHead(500, { 'x-trace': 'abc' }).end('upstream exploded');
      res.writeHead(202).end();
    });
    hotel = await deploy(service, { hook_url: customer.hookUrl, transcript_hook_url: customer.transcriptUrl });

    const widget = await Widget.open(service, hotel.deploymentId);
    const ready = await widget.hello(
      await mintToken(hotel.secret, hotel.deploymentId, { sub: 'guest-42', claims: { name: 'Ada' } }),
    );
    const ask = async (id: string, text: string) => {
      widget.send({ type: 'user_turn', client_turn_id: id, text, mode: 'text' });
      return (await widget.next('turn_accepted')).turn_id as string;
    };
    const sync = await ask('t1', 'Sync: when does the pool open?');
    await widget.next('reply');
    const deferred = await ask('t2', 'Is the Rooftop Bar (50% off) by the École open tonight?');
    await widget.next('turn_acknowledged');
    const reply = { conversation_id: ready.conversation_id, turn_id: deferred, reply_text: 'Yes, until midnight.' };
    expect((await postReply(service, hotel.deploymentId, reply, hotel.secret)).status).toBe(202);
    expect((await postReply(service, hotel.deploymentId, reply, hotel.secret)).status).toBe(200);
    await widget.next('reply');
    const failing = await ask('t3', 'Broken: can I book a taxi?');
    await widget.next('turn_failed');
    widget.close();
    story = {
      conversationId: ready.conversation_id,
      frames: widget.frames.filter((f) => 'seq' in f),
      turns: { sync, deferred, failing },
    };

    const other = await Widget.open(service, hotel.deploymentId);
    quiet = (await other.hello(await mintToken(hotel.secret, hotel.deploymentId, { sub: 'guest-7' }))).conversation_id;
    other.send({ type: 'end' });
    await other.next('conversation_ended');
    other.close();
  });
  afterAll(async () => {
    await service?.close();
    await customer?.close();
  });

  it('lists conversations newest first with the documented item, and every filter narrows it', async () => {
    const all = await hotel.api.get('/api/v1/conversations');
    expect(all.status).toBe(200);
    expect(all.body.meta).toEqual({ page: 1, per_page: 20, total_count: 2, total_pages: 1 });
    expect(all.body.data.map((c: { id: string }) => c.id)).toEqual([quiet, story.conversationId]);
    const [, item] = all.body.data;
    expect(Object.keys(item).sort()).toEqual(
      [
        'agent_id',
        'agent_version',
        'created_at',
        'deployment_id',
        'end_reason',
        'ended_at',
        'failed_turn_count',
        'handler',
        'handler_name',
        'handoff_at',
        'handoff_reason',
        'id',
        'last_activity_at',
        'last_message',
        'needs_person',
        'preview',
        'status',
        'turn_count',
        'updated_at',
        'user',
        'waiting_turns',
      ].sort(),
    );
    expect(item).toMatchObject({
      deployment_id: hotel.deploymentId,
      agent_version: 1,
      status: 'open',
      end_reason: null,
      ended_at: null,
      user: { sub: 'guest-42', name: 'Ada' },
      turn_count: 3,
      failed_turn_count: 1,
      handler: 'agent',
      handler_name: null,
      needs_person: false,
      waiting_turns: 0,
      preview: false,
      handoff_at: null,
    });
    expect(item.last_message).toEqual({ from: 'visitor', text: 'Broken: can I book a taxi?' });
    expect(item.last_activity_at).toBe(item.updated_at);
    expect(all.body.data[0]).toMatchObject({
      status: 'ended',
      end_reason: 'user_ended',
      turn_count: 0,
      failed_turn_count: 0,
      last_message: null,
    });
    expect(all.body.data[0].ended_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    const ids = async (query: string) =>
      (await hotel.api.get(`/api/v1/conversations?${query}`)).body.data.map((c: { id: string }) => c.id);
    expect(await ids('status=open')).toEqual([story.conversationId]);
    expect(await ids('status=ended')).toEqual([quiet]);
    expect(await ids('user_sub=guest-7')).toEqual([quiet]);
    expect(await ids('preview=false')).toEqual([quiet, story.conversationId]);
    expect(await ids('preview=true')).toEqual([]);
    expect(await ids(`deployment_id=${hotel.deploymentId}&agent_id=${item.agent_id}`)).toEqual([
      quiet,
      story.conversationId,
    ]);
    expect(await ids(`agent_id=${crypto.randomUUID()}`)).toEqual([]);
    expect(await ids('has_failures=true')).toEqual([story.conversationId]);
    expect(await ids('has_failures=false')).toEqual([quiet]);
    expect(await ids(`created_after=${encodeURIComponent(item.created_at)}`)).toEqual([quiet, story.conversationId]);
    expect(await ids(`created_before=${encodeURIComponent(item.created_at)}`)).toEqual([]);
    expect(await ids('per_page=1&page=2')).toEqual([story.conversationId]);
  });

  it('searches turn texts and replies as case-insensitive substrings, wildcards taken literally', async () => {
    const ids = async (search: string) =>
      (await hotel.api.get(`/api/v1/conversations?search=${encodeURIComponent(search)}`)).body.data.map(
        (c: { id: string }) => c.id,
      );
    expect(await ids('rooftop bar')).toEqual([story.conversationId]);
    expect(await ids('UNTIL MIDNIGHT')).toEqual([story.conversationId]); // a reply received later
    expect(await ids('the éCOLE')).toEqual([story.conversationId]); // beyond ASCII too
    expect(await ids('pool opens')).toEqual([story.conversationId]); // a reply in the hook's answer
    expect(await ids('50%')).toEqual([story.conversationId]);
    expect(await ids('5%')).toEqual([]);
    expect(await ids('%')).toEqual([story.conversationId]);
    expect(await ids('_')).toEqual([]);
    expect(await ids('"')).toEqual([]);
    expect(await ids('he "pool')).toEqual([]);
    expect(await ids('taxi')).toEqual([story.conversationId]);
    expect(await ids('spa')).toEqual([]);
    expect(await ids('(5')).toEqual([story.conversationId]);
  });

  it('finds a turn the moment it is stored: the search brings its index up to date first', async () => {
    const { api, deploymentId, secret } = await deploy(service, { hook_url: customer.hookUrl });
    const widget = await Widget.open(service, deploymentId);
    const { conversation_id } = await widget.hello(await mintToken(secret, deploymentId));
    widget.send({ type: 'user_turn', client_turn_id: 'z1', text: 'Is the Zephyr Lounge open?', mode: 'text' });
    await widget.next('turn_accepted');
    // Well inside the background indexer's 500 ms.
    expect(
      (await api.get('/api/v1/conversations?search=zephyr%20lounge')).body.data.map((c: { id: string }) => c.id),
    ).toEqual([conversation_id]);
    widget.close();
  });

  it('refuses filters that are not what they say, naming them', async () => {
    for (const [query, path] of [
      ['status=closed', 'status'],
      ['deployment_id=42', 'deployment_id'],
      ['created_after=yesterday', 'created_after'],
      ['has_failures=yes', 'has_failures'],
      [`search=${'x'.repeat(201)}`, 'search'],
      ['search=', 'search'],
      ['per_page=101', 'per_page'],
    ]) {
      const reply = await hotel.api.get(`/api/v1/conversations?${query}`);
      expectError(reply, 400, 'invalid_request');
      expect(reply.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
  });

  it('shows a conversation in full: each turn with its states, hook attempts and reply receipt, and the events as the widget got them', async () => {
    const detail = await hotel.api.get(`/api/v1/conversations/${story.conversationId}`);
    expect(detail.status).toBe(200);
    const { turns, events } = detail.body.data;
    expect(events).toEqual(story.frames);
    expect(turns.map((t: { id: string }) => t.id)).toEqual([
      story.turns.sync,
      story.turns.deferred,
      story.turns.failing,
    ]);
    const [sync, deferred, failing] = turns;
    expect(Object.keys(sync).sort()).toEqual(
      [
        'acknowledged_at',
        'client_turn_id',
        'created_at',
        'failure_reason',
        'feedback',
        'first_part_at',
        'guardrails',
        'heard',
        'hook_attempts',
        'knowledge',
        'model_calls',
        'id',
        'language',
        'mode',
        'page',
        'parts',
        'recognition',
        'replied_by',
        'reply_actions',
        'reply_received',
        'reply_text',
        'resolved_at',
        'status',
        'text',
        'voice',
        'words',
      ].sort(),
    );

    expect(sync).toMatchObject({
      client_turn_id: 't1',
      // A typed turn: no hands-free figures.
      voice: null,
      status: 'resolved',
      reply_text: 'The pool opens at 7.',
      words: { kept: 'everything', text_chars: 'Sync: when does the pool open?'.length, reply_chars: 20 },
      reply_actions: [],
      replied_by: { type: 'agent' },
      parts: [],
      first_part_at: null,
      failure_reason: null,
      reply_received: null,
    });
    expect(sync.acknowledged_at).toBe(sync.resolved_at);
    expect(sync.hook_attempts).toHaveLength(1);
    expect(sync.hook_attempts[0]).toMatchObject({
      kind: 'turn_hook',
      turn_id: sync.id,
      conversation_id: story.conversationId,
      event_type: 'turn.created',
      attempt: 1,
      outcome: 'succeeded',
      error: null,
      url: customer.hookUrl,
    });
    expect(sync.hook_attempts[0].response).toMatchObject({
      status: 200,
      body: '{"reply_text":"The pool opens at 7."}',
      truncated: false,
    });

    expect(deferred).toMatchObject({
      status: 'resolved',
      reply_text: 'Yes, until midnight.',
      reply_received: { duplicates: 1 },
    });
    expect(deferred.created_at <= deferred.acknowledged_at && deferred.acknowledged_at <= deferred.resolved_at).toBe(
      true,
    );
    expect(deferred.reply_received.at).toBe(deferred.resolved_at);
    // The request as the customer's server received it, byte for byte, signatures included.
    const received = customer.calls.find((c) => c.body.turn_id === deferred.id)!;
    const [attempt] = deferred.hook_attempts;
    expect(attempt.request.body).toBe(received.raw);
    for (const name of [
      'x-service-signature',
      'x-service-delivery',
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
      'content-type',
      'user-agent',
    ]) {
      expect([name, headerOf(attempt.request.headers, name)]).toEqual([name, received.headers[name]]);
    }
    expect(attempt.response.status).toBe(202);
    expect(attempt.duration_ms).toBeGreaterThanOrEqual(0);

    expect(failing).toMatchObject({
      status: 'failed',
      failure_reason: 'hook_failed',
      reply_text: null,
      acknowledged_at: null,
      resolved_at: null,
      reply_received: null,
    });
    expect(failing.hook_attempts.map((a: { attempt: number; outcome: string }) => [a.attempt, a.outcome])).toEqual([
      [1, 'failed'],
      [2, 'failed'],
      [3, 'failed'],
    ]);
    expect(failing.hook_attempts[0].response).toMatchObject({
      status: 500,
      body: 'upstream exploded',
      truncated: false,
      headers: { 'x-trace': 'abc' },
    });
    // One delivery id on every retry; each attempt signed afresh.
    const deliveryIds = failing.hook_attempts.map((a: { request: { headers: Record<string, string> } }) =>
      headerOf(a.request.headers, 'x-service-delivery'),
    );
    expect(new Set(deliveryIds).size).toBe(1);
    expect(deliveryIds[0]).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('exports the filtered conversations as NDJSON, one detail per line, equal to what the detail route shows', async () => {
    const res = await fetch(`${service.url}/api/v1/conversations/export?has_failures=true`, {
      headers: { authorization: `Bearer ${hotel.apiKey}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const lines = (await res.text()).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines.map((l) => JSON.parse(l))).toEqual([
      (await hotel.api.get(`/api/v1/conversations/${story.conversationId}`)).body.data,
    ]);

    const everything = await fetch(`${service.url}/api/v1/conversations/export`, {
      headers: { authorization: `Bearer ${hotel.apiKey}` },
    });
    expect(
      (await everything.text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).id),
    ).toEqual([quiet, story.conversationId]);
    expectError(await hotel.api.get('/api/v1/conversations/export?status=maybe'), 400, 'invalid_request');
  });

  it('stops an export at 10,000 conversations, newest first; the next request goes on from the last line', async () => {
    const { api, apiKey, deploymentId } = await deploy(service, { hook_url: customer.hookUrl });
    const { customer_id, agent_id } = await service.app.store.db
      .selectFrom('deployments')
      .select(['customer_id', 'agent_id'])
      .where('id', '=', deploymentId)
      .executeTakeFirstOrThrow();
    const start = Date.parse('2026-01-01T00:00:00.000Z');
    for (let offset = 0; offset < 10_001; offset += 1_000) {
      const rows = Array.from({ length: Math.min(1_000, 10_001 - offset) }, (_, i) => {
        const at = new Date(start + (offset + i) * 1000).toISOString();
        return {
          id: crypto.randomUUID(),
          customer_id,
          deployment_id: deploymentId,
          agent_id,
          user_sub: `bulk-${offset + i}`,
          user_name: null,
          user_ctx: null,
          status: 'ended' as const,
          end_reason: 'user_ended' as const,
          ended_at: at,
          agent_version: 1,
          last_seq: 0,
          turn_count: 0,
          handler: 'agent' as const,
          handler_name: null,
          needs_person: 0 as const,
          handoff_reason: null,
          handoff_at: null,
          preview: 0 as const,
          wait_told_at: null,
          created_at: at,
          updated_at: at,
        };
      });
      await service.app.store.db.insertInto('conversations').values(rows).execute();
    }
    const exported = async (query: string) => {
      const res = await fetch(`${service.url}/api/v1/conversations/export?${query}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      return (await res.text())
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { user: { sub: string }; created_at: string });
    };
    const first = await exported('');
    expect(first).toHaveLength(10_000);
    expect([first[0]!.user.sub, first.at(-1)!.user.sub]).toEqual(['bulk-10000', 'bulk-1']);
    const rest = await exported(`created_before=${encodeURIComponent(first.at(-1)!.created_at)}`);
    expect(rest.map((c) => c.user.sub)).toEqual(['bulk-0']);
    expect((await api.get('/api/v1/conversations?per_page=1')).body.meta.total_count).toBe(10_001);
  });

  it("keeps every customer's history to itself: another key sees 404 on each route and nothing in lists", async () => {
    const { apiKey } = await service.newCustomer('Another hotel');
    const stranger = client(service.url, apiKey);
    expectError(await stranger.get(`/api/v1/conversations/${story.conversationId}`), 404, 'not_found');
    expectError(await stranger.del(`/api/v1/conversations/${story.conversationId}`), 404, 'not_found');
    expect((await stranger.get('/api/v1/conversations')).body.meta.total_count).toBe(0);
    expect((await stranger.get(`/api/v1/conversations?deployment_id=${hotel.deploymentId}`)).body.data).toEqual([]);
    const exported = await fetch(`${service.url}/api/v1/conversations/export`, {
      headers: { authorization: `Bearer ${apiKey}` },
    });
    expect(await exported.text()).toBe('');
    expectError(await hotel.api.get('/api/v1/conversations/not-a-uuid'), 404, 'not_found');
    expectError(await hotel.api.get(`/api/v1/conversations/${crypto.randomUUID()}`), 404, 'not_found');
  });

  it('erases a conversation: an open one ends first (reason "deleted", close 4410), then nothing of it is left', async () => {
    const widget = await Widget.open(service, hotel.deploymentId);
    const ready = await widget.hello(await mintToken(hotel.secret, hotel.deploymentId, { sub: 'guest-forget-me' }));
    widget.send({ type: 'user_turn', client_turn_id: 'x1', text: 'Please forget me', mode: 'text' });
    await widget.next('turn_acknowledged');
    const id: string = ready.conversation_id;
    await waitFor(
      async () =>
        (await hotel.api.get(`/api/v1/deliveries?conversation_id=${id}&kind=transcript`)).body.meta.total_count >= 3,
    );

    const erased = await hotel.api.del(`/api/v1/conversations/${id}`);
    expect(erased.status).toBe(200);
    expect(erased.body).toEqual({ success: true, data: { id, deleted: true }, meta: {} });
    expect(await widget.next('turn_failed')).toMatchObject({ reason: 'conversation_ended' });
    expect(await widget.next('conversation_ended')).toMatchObject({ reason: 'deleted' });
    expect((await widget.closed).code).toBe(4410);

    expectError(await hotel.api.get(`/api/v1/conversations/${id}`), 404, 'not_found');
    expectError(await hotel.api.del(`/api/v1/conversations/${id}`), 404, 'not_found');
    expect((await hotel.api.get(`/api/v1/deliveries?conversation_id=${id}`)).body.meta.total_count).toBe(0);
    expect((await hotel.api.get('/api/v1/conversations?search=forget')).body.data).toEqual([]);
    const db = service.app.store.db;
    for (const table of ['turns', 'conversation_events', 'transcript_outbox', 'deliveries'] as const) {
      expect([
        table,
        (await db.selectFrom(table).select('conversation_id').where('conversation_id', '=', id).execute()).length,
      ]).toEqual([table, 0]);
    }
    // Resuming it is resuming nothing.
    const back = await Widget.open(service, hotel.deploymentId);
    back.send({
      type: 'hello',
      token: await mintToken(hotel.secret, hotel.deploymentId, { sub: 'guest-forget-me' }),
      conversation_id: id,
      last_seq: 0,
    });
    expect((await back.closed).code).toBe(4404);
  });

  it('tells a socket that missed the erasure (another node did it) as soon as it acts: a turn or an end closes it with 4410', async () => {
    for (const act of [
      { type: 'user_turn', client_turn_id: 'late', text: 'Still there?', mode: 'text' },
      { type: 'end' },
    ]) {
      const widget = await Widget.open(service, hotel.deploymentId);
      const { conversation_id } = await widget.hello(
        await mintToken(hotel.secret, hotel.deploymentId, { sub: `guest-elsewhere-${act.type}` }),
      );
      // Erased in the store behind this node's back: no frame reaches the socket.
      await service.app.store.db.deleteFrom('conversations').where('id', '=', conversation_id).execute();
      widget.send(act);
      expect(await widget.next('error')).toMatchObject({ code: 'conversation_ended' });
      expect((await widget.closed).code).toBe(4410);
    }
  });
});
