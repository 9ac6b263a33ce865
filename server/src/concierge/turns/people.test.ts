import { expect, it } from 'vitest';
import { deploy, mintToken, postReply, serviceWithCustomer, Widget } from '../../../test/concierge-kit.js';
import { client, describeEachStore, expectError, waitFor } from '../../../test/harness.js';

/** README, A person in the conversation: takeover, a person's answers and messages, release, and the hook's handoff. */
describeEachStore('a person in the conversation', (kind) => {
  const { service, customer } = serviceWithCustomer(kind);

  async function conversation(extra: Record<string, unknown> = {}) {
    const deployed = await deploy(
      service(),
      { hook_url: customer().hookUrl, transcript_hook_url: customer().transcriptUrl },
      extra,
    );
    const widget = await Widget.open(service(), deployed.deploymentId);
    const { conversation_id } = await widget.hello(await mintToken(deployed.secret, deployed.deploymentId));
    const path = `/api/v1/conversations/${conversation_id}`;
    return { ...deployed, widget, conversation_id, path };
  }

  it("takes over: turns wait for a person's answer without a hook call, answered with their name; messages; release hands back to the hook", async () => {
    const { api, widget, path, conversation_id } = await conversation({
      runtime_config: { person_reply_timeout_s: 60 },
    });
    const taken = await api.post(`${path}/takeover`, { name: 'Maria' });
    expect(taken.status).toBe(200);
    expect(taken.body.data).toMatchObject({
      id: conversation_id,
      handler: 'person',
      handler_name: 'Maria',
      needs_person: false,
      waiting_turns: 0,
    });
    expect(await widget.next('operator_joined')).toEqual({ type: 'operator_joined', seq: 1, name: 'Maria' });

    const hookCalls = customer().calls.length;
    widget.send({ type: 'user_turn', client_turn_id: 'p1', text: 'My key card stopped working', mode: 'text' });
    const { turn_id } = await widget.next('turn_acknowledged');
    expect(
      (await api.get(`/api/v1/conversations?handler=person`)).body.data.map(
        (c: { id: string; waiting_turns: number }) => [c.id, c.waiting_turns],
      ),
    ).toEqual([[conversation_id, 1]]);
    const stored = await service()
      .app.store.db.selectFrom('turns')
      .select(['acknowledged_at', 'expires_at'])
      .where('id', '=', turn_id)
      .executeTakeFirstOrThrow();
    expect(Date.parse(stored.expires_at!) - Date.parse(stored.acknowledged_at!)).toBeGreaterThanOrEqual(59_900);

    const actions = [{ type: 'quick_reply', label: 'Thanks', text: 'Thank you!' }];
    const answered = await api.post(`${path}/turns/${turn_id}/reply`, {
      reply_text: 'I am sending a new one up to your room.',
      actions,
    });
    expect([answered.status, answered.body.data]).toEqual([202, { turn_id, status: 'resolved', duplicate: false }]);
    expect(await widget.next('reply')).toEqual({
      type: 'reply',
      seq: 4,
      turn_id,
      text: 'I am sending a new one up to your room.',
      actions,
      name: 'Maria',
    });
    expect(
      (
        await api.post(`${path}/turns/${turn_id}/reply`, {
          reply_text: 'I am sending a new one up to your room.',
          actions,
        })
      ).status,
    ).toBe(200);
    expectError(
      await api.post(`${path}/turns/${turn_id}/reply`, { reply_text: 'Something else' }),
      409,
      'turn_already_resolved',
    );
    expectError(
      await api.post(`${path}/turns/${crypto.randomUUID()}/reply`, { reply_text: 'Nobody asked' }),
      404,
      'turn_not_found',
    );
    expect(customer().calls.length).toBe(hookCalls);

    expect(
      (await api.post(`${path}/messages`, { text: 'It should be there in five minutes.', name: 'Maria' })).status,
    ).toBe(200);
    expect(await widget.next('message')).toEqual({
      type: 'message',
      seq: 5,
      text: 'It should be there in five minutes.',
      actions: [],
      name: 'Maria',
    });

    const released = await api.post(`${path}/release`);
    expect(released.body.data).toMatchObject({ handler: 'agent', handler_name: null });
    expect(await widget.next('operator_left')).toEqual({ type: 'operator_left', seq: 6, name: 'Maria' });
    expectError(await api.post(`${path}/release`), 409, 'invalid_state');
    expectError(
      await api.post(`${path}/turns/${turn_id}/reply`, { reply_text: 'Not mine any more' }),
      409,
      'invalid_state',
    );
    widget.send({ type: 'user_turn', client_turn_id: 'p2', text: 'And breakfast?', mode: 'text' });
    await widget.next('turn_acknowledged');
    await waitFor(async () => customer().calls.length === hookCalls + 1);

    const { turns } = (await api.get(path)).body.data;
    expect(turns.map((t: { replied_by: unknown }) => t.replied_by)).toEqual([{ type: 'person', name: 'Maria' }, null]);
    const transcript = await waitFor(async () => {
      const got = customer()
        .transcript.map((c) => c.body)
        .filter((e) => e.conversation_id === conversation_id);
      return got.filter((e) => e.type === 'conversation.handoff').length === 2 && got;
    });
    expect(
      transcript
        .filter((e) => ['conversation.handoff', 'message.created', 'turn.resolved'].includes(e.type))
        .map((e) => [e.type, e.data]),
    ).toEqual([
      ['conversation.handoff', { handler: 'person', name: 'Maria', needs_person: false, reason: null }],
      [
        'turn.resolved',
        {
          turn_id,
          reply_text: 'I am sending a new one up to your room.',
          actions,
          replied_by: { type: 'person', name: 'Maria' },
        },
      ],
      ['message.created', { text: 'It should be there in five minutes.', actions: [], name: 'Maria' }],
      ['conversation.handoff', { handler: 'agent', name: null, needs_person: false, reason: null }],
    ]);
    widget.close();
  });

  it('at the switch: a pending turn keeps its hook call, an acknowledged one stays answerable by either; a second takeover renames; an ended conversation refuses', async () => {
    const { api, widget, path, deploymentId, secret, conversation_id } = await conversation();
    let answer: (() => void) | undefined;
    customer().state.behaviour = (_c, res) => {
      answer = () => res.writeHead(202).end();
    };
    widget.send({ type: 'user_turn', client_turn_id: 'a', text: 'Pending at the switch', mode: 'text' });
    const pending = await widget.next('turn_accepted');
    await waitFor(async () => Boolean(answer));
    expect((await api.post(`${path}/takeover`, { name: 'Maria' })).status).toBe(200);
    answer!();
    expect(await widget.next('turn_acknowledged')).toMatchObject({ turn_id: pending.turn_id });
    // The hook's own signed reply still answers it; a person could have, too.
    expect(
      (
        await postReply(
          service(),
          deploymentId,
          { conversation_id, turn_id: pending.turn_id, reply_text: 'From the hook' },
          secret,
        )
      ).status,
    ).toBe(202);
    expect(await widget.next('reply')).toEqual({
      type: 'reply',
      seq: 4,
      turn_id: pending.turn_id,
      text: 'From the hook',
      actions: [],
    });

    expect((await api.post(`${path}/takeover`, { name: 'Ana' })).body.data).toMatchObject({ handler_name: 'Ana' });
    expect(widget.frames.filter((f) => f.type === 'operator_joined').map((f) => f.name)).toEqual(['Maria', 'Ana']);
    expectError(await api.post(`${path}/takeover`, { name: '' }), 400, 'invalid_request');
    expectError(await api.post(`${path}/messages`, { text: 'x'.repeat(4001), name: 'Ana' }), 400, 'invalid_request');

    widget.send({ type: 'end' });
    await widget.next('conversation_ended');
    expectError(await api.post(`${path}/takeover`, { name: 'Maria' }), 409, 'invalid_state');
    expectError(await api.post(`${path}/messages`, { text: 'Anyone?', name: 'Maria' }), 409, 'invalid_state');
    widget.close();
  });

  it('the hook hands over: needs_person and its reason, listed by the filter, reported to the transcript; a takeover clears it; an invalid handoff is refused', async () => {
    const { api, widget, path, conversation_id } = await conversation();
    customer().state.behaviour = (call, res) => {
      const reason = call.body.text === 'bad' ? 'x'.repeat(201) : 'The guest asks for a person';
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          handoff: { reason },
          ...(call.body.text === 'quiet' ? {} : { reply_text: 'I am fetching someone from reception.' }),
        }),
      );
    };
    widget.send({ type: 'user_turn', client_turn_id: 'h1', text: 'I want to talk to a person', mode: 'text' });
    // The reply that hands over says so: a notice, which the widget offers no rating for.
    expect(await widget.next('reply')).toMatchObject({ text: 'I am fetching someone from reception.', handoff: true });
    await widget.next('turn_acknowledged');
    const listed = await api.get('/api/v1/conversations?needs_person=true');
    expect(listed.body.data.map((c: { id: string }) => c.id)).toEqual([conversation_id]);
    expect(listed.body.data[0]).toMatchObject({
      needs_person: true,
      handoff_reason: 'The guest asks for a person',
      handler: 'agent',
    });
    expect(
      (await api.get('/api/v1/conversations?needs_person=false')).body.data.map((c: { id: string }) => c.id),
    ).not.toContain(conversation_id);

    // A handoff alone acknowledges the turn, which waits for an answer.
    widget.send({ type: 'user_turn', client_turn_id: 'h2', text: 'quiet', mode: 'text' });
    const quiet = await widget.next('turn_acknowledged');
    widget.send({ type: 'user_turn', client_turn_id: 'h3', text: 'bad', mode: 'text' });
    expect(await widget.next('turn_failed')).toMatchObject({ reason: 'hook_rejected' });

    expect((await api.post(`${path}/takeover`, { name: 'Maria' })).body.data).toMatchObject({
      needs_person: false,
      handoff_reason: null,
    });
    const hello = await api.post(`${path}/turns/${quiet.turn_id}/reply`, { reply_text: 'Hello, Maria here.' });
    expect([hello.status, hello.body.error]).toEqual([202, undefined]);
    const handoffs = await waitFor(async () => {
      const got = customer()
        .transcript.map((c) => c.body)
        .filter((e) => e.type === 'conversation.handoff' && e.conversation_id === conversation_id);
      return got.length === 3 && got;
    });
    expect(handoffs.map((e) => e.data)).toEqual([
      { handler: 'agent', name: null, needs_person: true, reason: 'The guest asks for a person' },
      { handler: 'agent', name: null, needs_person: true, reason: 'The guest asks for a person' },
      { handler: 'person', name: 'Maria', needs_person: false, reason: null },
    ]);
    widget.close();
  });

  it('the visitor asks for a person while waiting: needs_person with the reason, told to the widget and the transcript; counted once; nothing while a person handles it', async () => {
    const { api, widget, path, conversation_id } = await conversation();
    customer().state.behaviour = (_call, res) => res.writeHead(202).end(); // acknowledged, the answer still to come
    widget.send({ type: 'user_turn', client_turn_id: 'w1', text: 'Can I bring my dog?', mode: 'text' });
    await widget.next('turn_acknowledged');
    widget.send({ type: 'ask_for_person' });
    expect(await widget.next('person_requested')).toEqual({ type: 'person_requested', seq: 3 });
    widget.send({ type: 'ask_for_person' });
    expect(await widget.next('person_requested')).toEqual({ type: 'person_requested', seq: 4 });
    const listed = await api.get('/api/v1/conversations?needs_person=true');
    expect(listed.body.data.map((c: { id: string }) => c.id)).toEqual([conversation_id]);
    expect(listed.body.data[0]).toMatchObject({
      needs_person: true,
      handoff_reason: 'The visitor asked for a person',
      waiting_turns: 1,
    });
    const handoffs = await waitFor(async () => {
      const got = customer()
        .transcript.map((c) => c.body)
        .filter((e) => e.type === 'conversation.handoff' && e.conversation_id === conversation_id);
      return got.length === 2 && got;
    });
    expect(handoffs[0].data).toEqual({
      handler: 'agent',
      name: null,
      needs_person: true,
      reason: 'The visitor asked for a person',
    });

    expect((await api.post(`${path}/takeover`, { name: 'Maria' })).status).toBe(200);
    await widget.next('operator_joined');
    widget.send({ type: 'ask_for_person' });
    widget.send({ type: 'ping' });
    expect(await widget.next('pong')).toEqual({ type: 'pong' });
    expect(widget.frames.filter((f) => f.type === 'person_requested')).toHaveLength(2);
    expect((await api.get(path)).body.data.needs_person).toBe(false);
    widget.close();

    // Ended meanwhile (here by another node, as the store shows it): the request changes nothing,
    // and the socket is not cut over it: the conversation's own end tells the widget.
    const raced = await conversation();
    await service()
      .app.store.db.updateTable('conversations')
      .set({ status: 'ended', end_reason: 'user_ended' })
      .where('id', '=', raced.conversation_id)
      .execute();
    raced.widget.send({ type: 'ask_for_person' });
    raced.widget.send({ type: 'ping' });
    expect(await raced.widget.next('pong')).toEqual({ type: 'pong' });
    expect(raced.widget.frames.filter((f) => f.type === 'error' || f.type === 'person_requested')).toEqual([]);
    raced.widget.close();
  });

  it('a person closes the conversation: it ends "closed" for the visitor, its waiting turn fails, the transcript says so; twice is 409, another customer 404', async () => {
    const { api, widget, path, conversation_id } = await conversation();
    customer().state.behaviour = (_call, res) => res.writeHead(202).end();
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Anyone there?', mode: 'text' });
    const { turn_id } = await widget.next('turn_acknowledged');
    const stranger = client(service().url, (await service().newCustomer('Other')).apiKey);
    expectError(await stranger.post(`${path}/close`), 404, 'not_found');
    const closed = await api.post(`${path}/close`);
    expect([closed.status, closed.body.data.status, closed.body.data.end_reason]).toEqual([200, 'ended', 'closed']);
    expect(await widget.next('turn_failed')).toMatchObject({ turn_id, reason: 'conversation_ended' });
    expect(await widget.next('conversation_ended')).toMatchObject({ reason: 'closed' });
    expect((await widget.closed).code).toBe(4410);
    expectError(await api.post(`${path}/close`), 409, 'invalid_state');
    const ended = await waitFor(async () =>
      customer()
        .transcript.map((c) => c.body)
        .find((e) => e.type === 'conversation.ended' && e.conversation_id === conversation_id),
    );
    expect(ended.data).toEqual({ reason: 'closed' });
  });

  it("a request for a person nobody takes is told to the visitor once after person_wait_notice_s, in the customer's words; a new request tells again", async () => {
    const notice = 'Everyone is with a guest: leave your email and we will write back.';
    const { widget } = await conversation({
      runtime_config: { person_wait_notice_s: 1, person_wait_notice: notice },
    });
    widget.send({ type: 'ask_for_person' });
    const asked = await widget.next('person_requested');
    expect(await widget.next('still_waiting')).toEqual({ type: 'still_waiting', seq: asked.seq + 1, text: notice });
    // Told once: a few sweeps later, nothing more.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(widget.frames.filter((f) => f.type === 'still_waiting')).toHaveLength(1);
    widget.send({ type: 'ask_for_person' });
    await widget.next('person_requested');
    expect(await widget.next('still_waiting')).toMatchObject({ text: notice });
    widget.close();

    // Without words of the customer's, the widget says its own; 0 tells nothing; an empty text is refused.
    const plain = await conversation({ runtime_config: { person_wait_notice_s: 1 } });
    plain.widget.send({ type: 'ask_for_person' });
    await plain.widget.next('person_requested');
    expect(await plain.widget.next('still_waiting')).toEqual({ type: 'still_waiting', seq: expect.any(Number) });
    plain.widget.close();
    const never = await conversation({ runtime_config: { person_wait_notice_s: 0 } });
    never.widget.send({ type: 'ask_for_person' });
    await never.widget.next('person_requested');
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(never.widget.frames.filter((f) => f.type === 'still_waiting')).toHaveLength(0);
    expectError(
      await never.api.put(`/api/v1/deployments/${never.deploymentId}`, { runtime_config: { person_wait_notice: ' ' } }),
      400,
      'invalid_request',
    );
    never.widget.close();
  });

  it("another customer's many older requests (a day's wait, or none told) do not hide a request that is due", async () => {
    const old = new Date(Date.now() - 3_600_000).toISOString();
    const db = service().app.store.db;
    for (const notice of [86_400, 0]) {
      const other = await conversation({ runtime_config: { person_wait_notice_s: notice } });
      other.widget.close();
      const { customer_id, agent_id } = await db
        .selectFrom('conversations')
        .select(['customer_id', 'agent_id'])
        .where('id', '=', other.conversation_id)
        .executeTakeFirstOrThrow();
      await db
        .insertInto('conversations')
        .values(
          Array.from({ length: 150 }, (_, i) => ({
            id: crypto.randomUUID(),
            customer_id,
            deployment_id: other.deploymentId,
            agent_id,
            user_sub: `waiting-${i}`,
            user_name: null,
            user_ctx: null,
            status: 'open' as const,
            end_reason: null,
            ended_at: null,
            agent_version: 1,
            last_seq: 0,
            turn_count: 0,
            handler: 'agent' as const,
            handler_name: null,
            needs_person: 1 as const,
            handoff_reason: 'The guest asked for a person',
            handoff_at: old,
            preview: 0 as const,
            wait_told_at: null,
            created_at: old,
            updated_at: old,
          })),
        )
        .execute();
    }
    const { widget } = await conversation({ runtime_config: { person_wait_notice_s: 1 } });
    widget.send({ type: 'ask_for_person' });
    await widget.next('person_requested');
    expect(await widget.next('still_waiting')).toMatchObject({ type: 'still_waiting' });
    widget.close();
  });
});
