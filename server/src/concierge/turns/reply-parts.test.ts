import { describe, expect, it } from 'vitest';
import { deploy, mintToken, postReply, serviceWithCustomer, sign, Widget } from '../../../test/concierge-kit.js';
import { describeEachStore, waitFor } from '../../../test/harness.js';

/** README, Streaming a reply and Actions on a reply: a reply in parts, and the actions a reply carries. */
describeEachStore('replies in parts, and actions', (kind) => {
  const { service, customer } = serviceWithCustomer(kind);

  /** A conversation whose first turn is acknowledged (the hook answers 202), with its deployment. */
  async function acknowledgedTurn(extra: Record<string, unknown> = {}, channel: Record<string, unknown> = {}) {
    const deployed = await deploy(service(), { hook_url: customer().hookUrl, ...channel }, extra);
    const token = await mintToken(deployed.secret, deployed.deploymentId);
    const widget = await Widget.open(service(), deployed.deploymentId);
    const { conversation_id } = await widget.hello(token);
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'A table tonight?', mode: 'voice' });
    const { turn_id } = await widget.next('turn_acknowledged');
    const post = (body: Record<string, unknown>, secret = deployed.secret) =>
      postReply(service(), deployed.deploymentId, { conversation_id, turn_id, ...body }, secret);
    return { ...deployed, token, widget, conversation_id, turn_id, post };
  }

  it('takes each part once: 202, an identical repeat 200, other text under its number 409 part_conflict; each reaches the widget as it comes', async () => {
    const { widget, turn_id, post } = await acknowledgedTurn();
    const first = await post({ part: 0, text: 'We have a table ' });
    expect([first.status, first.body.data]).toEqual([
      202,
      { turn_id, status: 'acknowledged', part: 0, duplicate: false },
    ]);
    expect(await widget.next('reply_part')).toEqual({
      type: 'reply_part',
      seq: 3,
      turn_id,
      part: 0,
      text: 'We have a table ',
    });

    const repeat = await post({ part: 0, text: 'We have a table ' });
    expect([repeat.status, repeat.body.data]).toEqual([
      200,
      { turn_id, status: 'acknowledged', part: 0, duplicate: true },
    ]);
    const conflict = await post({ part: 0, text: 'We have no table ' });
    expect([conflict.status, conflict.body.error.code]).toEqual([409, 'part_conflict']);

    // A gap is the widget's to wait out: the service stores and sends parts as they arrive.
    expect((await post({ part: 2, text: 'Shall I book it?' })).status).toBe(202);
    expect((await post({ part: 1, text: 'at 8 pm. ' })).status).toBe(202);
    expect([await widget.next('reply_part'), await widget.next('reply_part')]).toEqual([
      { type: 'reply_part', seq: 4, turn_id, part: 2, text: 'Shall I book it?' },
      { type: 'reply_part', seq: 5, turn_id, part: 1, text: 'at 8 pm. ' },
    ]);
    // Neither the repeat nor the conflict was stored or sent.
    expect(widget.frames.filter((f) => f.type === 'reply_part')).toHaveLength(3);
    widget.close();
  });

  it('ends with the final reply, which replaces the parts: the reply frame, turn.resolved and the history carry the final text; a later part is 409 turn_already_resolved', async () => {
    const { widget, turn_id, conversation_id, post, api } = await acknowledgedTurn(
      {},
      { transcript_hook_url: customer().transcriptUrl },
    );
    const before = Date.now();
    for (const [part, text] of ['Breakfast is ', 'from 7 to 10.'].entries())
      expect((await post({ part, text })).status).toBe(202);
    const final = await post({ reply_text: 'Breakfast is served from 7 to 10.' });
    expect([final.status, final.body.data]).toEqual([202, { turn_id, status: 'resolved', duplicate: false }]);
    expect(await widget.next('reply')).toEqual({
      type: 'reply',
      seq: 5,
      turn_id,
      text: 'Breakfast is served from 7 to 10.',
      actions: [],
    });

    const late = await post({ part: 2, text: ' Enjoy!' });
    expect([late.status, late.body.error.code]).toEqual([409, 'turn_already_resolved']);
    // A repeat of a part it took is still the same part, whatever became of the turn.
    expect((await post({ part: 1, text: 'from 7 to 10.' })).status).toBe(200);

    const { turns, events } = (await api.get(`/api/v1/conversations/${conversation_id}`)).body.data;
    expect(turns[0]).toMatchObject({
      status: 'resolved',
      reply_text: 'Breakfast is served from 7 to 10.',
      reply_actions: [],
    });
    expect(turns[0].parts.map((p: { part: number; text: string }) => [p.part, p.text])).toEqual([
      [0, 'Breakfast is '],
      [1, 'from 7 to 10.'],
    ]);
    const [p0, p1] = turns[0].parts;
    expect(turns[0].first_part_at).toBe(p0.received_at);
    expect(Date.parse(p0.received_at)).toBeGreaterThanOrEqual(before - 1);
    expect(p0.received_at <= p1.received_at && p1.received_at <= turns[0].resolved_at).toBe(true);
    expect(events.map((e: { type: string }) => e.type)).toEqual([
      'turn_accepted',
      'turn_acknowledged',
      'reply_part',
      'reply_part',
      'reply',
    ]);

    // Parts are not transcript events: turn.resolved carries the whole reply.
    const transcript = await waitFor(async () => {
      const got = customer().transcript.map((c) => c.body);
      return got.some((e) => e.type === 'turn.resolved') && got;
    });
    expect(transcript.map((e) => e.type)).toEqual([
      'conversation.started',
      'turn.created',
      'turn.acknowledged',
      'turn.resolved',
    ]);
    expect(transcript[3].data).toEqual({
      turn_id,
      reply_text: 'Breakfast is served from 7 to 10.',
      actions: [],
      replied_by: { type: 'agent' },
    });
    widget.close();
  });

  it('refuses a part as it refuses a reply, in the same order: signature before the body, then the turn and its state', async () => {
    const { turn_id, conversation_id, deploymentId, secret, post } = await acknowledgedTurn();
    const raw = JSON.stringify({ conversation_id, turn_id, part: 0 });
    const badlySigned = await postReply(service(), deploymentId, undefined, secret, {
      raw,
      signature: sign('whsec_wrong', raw),
    });
    expect([badlySigned.status, badlySigned.body.error.code]).toEqual([401, 'invalid_signature']);

    for (const [body, path] of [
      [{ part: 0 }, 'text'],
      [{ part: 500, text: 'x' }, 'part'],
      [{ part: -1, text: 'x' }, 'part'],
      [{ part: 1.5, text: 'x' }, 'part'],
      [{ part: 0, text: '' }, 'text'],
      [{ part: 0, text: '😀'.repeat(2001) }, 'text'],
      [{ part: 0, text: 'x', reply_text: 'both' }, 'body'],
      [{ reply_text: 'Sure.', part_text: 'x' }, 'body'],
    ] as const) {
      const refused = await post(body);
      expect([refused.status, refused.body.error.code], JSON.stringify(body)).toEqual([400, 'invalid_request']);
      expect(
        refused.body.error.details.map((d: { path: string }) => d.path),
        JSON.stringify(body),
      ).toContain(path);
    }
    // 2000 characters counted as code points: 2000 emoji are 4000 UTF-16 units, and one part.
    expect((await post({ part: 0, text: '😀'.repeat(2000) })).status).toBe(202);

    const unknown = await postReply(
      service(),
      deploymentId,
      { conversation_id, turn_id: crypto.randomUUID(), part: 0, text: 'x' },
      secret,
    );
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'turn_not_found']);
  });

  it('a part for a pending turn waits for its acknowledgement, then is 409 turn_not_acknowledged; for a failed turn 409 turn_not_pending', async () => {
    const deployed = await deploy(service(), { hook_url: customer().hookUrl });
    const widget = await Widget.open(service(), deployed.deploymentId);
    const { conversation_id } = await widget.hello(await mintToken(deployed.secret, deployed.deploymentId));
    // The hook holds its answer: the turn stays pending.
    let answer: (() => void) | undefined;
    customer().state.behaviour = (_c, res) => {
      answer = () => res.writeHead(202).end();
    };
    widget.send({ type: 'user_turn', client_turn_id: 'p1', text: 'Pending?', mode: 'text' });
    const { turn_id } = await widget.next('turn_accepted');
    await waitFor(async () => Boolean(answer));
    const started = Date.now();
    const early = await postReply(
      service(),
      deployed.deploymentId,
      { conversation_id, turn_id, part: 0, text: 'Too soon' },
      deployed.secret,
    );
    expect([early.status, early.body.error.code]).toEqual([409, 'turn_not_acknowledged']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_900);

    // A part that overtakes the hook's 2xx is taken once the acknowledgement commits.
    const overtaking = postReply(
      service(),
      deployed.deploymentId,
      { conversation_id, turn_id, part: 0, text: 'Just in time' },
      deployed.secret,
    );
    await new Promise((r) => setTimeout(r, 200));
    answer!();
    expect((await overtaking).status).toBe(202);
    expect(await widget.next('reply_part')).toMatchObject({ turn_id, part: 0, text: 'Just in time' });

    customer().state.behaviour = (_c, res) => res.writeHead(400).end();
    widget.send({ type: 'user_turn', client_turn_id: 'p2', text: 'Refused?', mode: 'text' });
    const failed = await widget.next('turn_failed');
    const late = await postReply(
      service(),
      deployed.deploymentId,
      { conversation_id, turn_id: failed.turn_id, part: 0, text: 'Late' },
      deployed.secret,
    );
    expect([late.status, late.body.error.code]).toEqual([409, 'turn_not_pending']);
    widget.close();
  });

  it('holds at most 20,000 characters of parts per reply, counted as code points; an identical repeat adds nothing', async () => {
    const { widget, post } = await acknowledgedTurn();
    // Ten parts of 2000 emoji: 20,000 code points (40,000 UTF-16 units), exactly the most.
    for (let part = 0; part < 10; part++) expect((await post({ part, text: '🍳'.repeat(2000) })).status).toBe(202);
    expect((await post({ part: 3, text: '🍳'.repeat(2000) })).status).toBe(200);
    const over = await post({ part: 10, text: '.' });
    expect([over.status, over.body.error.code]).toEqual([409, 'invalid_state']);
    // The final reply still resolves the turn.
    expect((await post({ reply_text: 'Eggs, all of them.' })).status).toBe(202);
    expect(await widget.next('reply')).toMatchObject({ text: 'Eggs, all of them.' });
    widget.close();
  });

  it('replays the parts to a widget that resumes mid-reply, in seq order, and every part to one that starts from nothing', async () => {
    const { widget, token, conversation_id, turn_id, deploymentId, post } = await acknowledgedTurn();
    expect((await post({ part: 0, text: 'One. ' })).status).toBe(202);
    const { seq } = await widget.next('reply_part');
    widget.close();
    await widget.closed;
    for (const [part, text] of [
      [1, 'Two. '],
      [2, 'Three.'],
    ] as const)
      expect((await post({ part, text })).status).toBe(202);

    const resumed = await Widget.open(service(), deploymentId);
    expect(await resumed.hello(token, { conversation_id, last_seq: seq })).toMatchObject({
      resumed: true,
      last_seq: seq + 2,
    });
    expect([await resumed.next('reply_part'), await resumed.next('reply_part')]).toEqual([
      { type: 'reply_part', seq: seq + 1, turn_id, part: 1, text: 'Two. ' },
      { type: 'reply_part', seq: seq + 2, turn_id, part: 2, text: 'Three.' },
    ]);
    resumed.close();

    const reloaded = await Widget.open(service(), deploymentId);
    await reloaded.hello(token, { conversation_id, last_seq: 0 });
    await waitFor(async () => reloaded.frames.filter((f) => f.type === 'reply_part').length === 3);
    expect(reloaded.frames.filter((f) => f.seq).map((f) => f.type)).toEqual([
      'turn_accepted',
      'turn_acknowledged',
      'reply_part',
      'reply_part',
      'reply_part',
    ]);
    reloaded.close();
  });

  it('restarts the reply timeout with each part: a turn streaming past reply_timeout_s lives on, and expires that long after its last part', async () => {
    const { widget, turn_id, post } = await acknowledgedTurn({ runtime_config: { reply_timeout_s: 5 } });
    const acknowledged = Date.now();
    await new Promise((r) => setTimeout(r, 3_500));
    expect((await post({ part: 0, text: 'Still writing…' })).status).toBe(202);
    const lastPart = Date.now();
    // Past the first deadline (acknowledgement + 5 s), the turn still takes parts.
    await new Promise((r) => setTimeout(r, acknowledged + 6_000 - Date.now()));
    expect(widget.frames.some((f) => f.type === 'turn_failed')).toBe(false);
    expect(await widget.next('turn_failed', 6_000)).toMatchObject({ turn_id, reason: 'reply_timeout' });
    expect(Date.now() - lastPart).toBeGreaterThanOrEqual(5_000);
    const late = await post({ part: 1, text: 'Done.' });
    expect([late.status, late.body.error.code]).toEqual([409, 'turn_not_pending']);
    widget.close();
  }, 20_000);

  describe('actions', () => {
    const link = { type: 'link', label: 'Book online', url: 'https://hotel.example/book?table=1' };
    const quick = { type: 'quick_reply', label: '8 pm', text: 'A table at 8 pm, please' };
    const client = { type: 'client', name: 'show_rooms', args: { floor: 2 } };

    it('refuses actions that are not what the contract allows, naming the field: a javascript: URL among them', async () => {
      const { post } = await acknowledgedTurn();
      for (const [actions, path] of [
        [[{ ...link, url: 'javascript:alert(document.cookie)' }], 'actions.0.url'],
        [[{ ...link, url: 'data:text/html,<b>hi</b>' }], 'actions.0.url'],
        [[{ ...link, url: 'ftp://hotel.example/menu' }], 'actions.0.url'],
        [[{ ...link, label: '' }], 'actions.0.label'],
        [[{ ...quick, label: 'x'.repeat(41) }], 'actions.0.label'],
        [[{ ...quick, text: 'x'.repeat(501) }], 'actions.0.text'],
        [[{ ...client, name: 'Show Rooms' }], 'actions.0.name'],
        [[{ ...client, args: { blob: 'x'.repeat(2050) } }], 'actions.0.args'],
        [[{ ...client, args: [1, 2] }], 'actions.0.args'],
        [[{ ...link, target: '_self' }], 'actions.0'],
        [[{ type: 'call', label: 'Call us' }], 'actions.0.type'],
        [Array.from({ length: 7 }, () => quick), 'actions'],
      ] as const) {
        const refused = await post({ reply_text: 'Here you are.', actions });
        expect([refused.status, refused.body.error.code], JSON.stringify(actions)).toEqual([400, 'invalid_request']);
        expect(
          refused.body.error.details.map((d: { path: string }) => d.path),
          JSON.stringify(actions),
        ).toContain(path);
      }
    });

    it('carries valid actions with the reply to the widget, the history and turn.resolved; a repeat with other actions is 409 turn_already_resolved', async () => {
      const { widget, turn_id, conversation_id, post, api } = await acknowledgedTurn(
        {},
        { transcript_hook_url: customer().transcriptUrl },
      );
      const actions = [link, quick, client, { type: 'client', name: 'open.menu-2', label: 'Menu' }];
      const posted = await post({ reply_text: 'We have a table at 8.', actions });
      expect(posted.status).toBe(202);
      expect(await widget.next('reply')).toEqual({
        type: 'reply',
        seq: 3,
        turn_id,
        text: 'We have a table at 8.',
        actions,
      });
      expect((await post({ reply_text: 'We have a table at 8.', actions })).status).toBe(200);
      const changed = await post({ reply_text: 'We have a table at 8.', actions: [link] });
      expect([changed.status, changed.body.error.code]).toEqual([409, 'turn_already_resolved']);

      const { turns } = (await api.get(`/api/v1/conversations/${conversation_id}`)).body.data;
      expect(turns[0]).toMatchObject({ reply_actions: actions, reply_received: { duplicates: 1 } });
      const resolved = await waitFor(async () => customer().transcript.find((c) => c.body.type === 'turn.resolved'));
      expect(resolved.body.data).toEqual({
        turn_id,
        reply_text: 'We have a table at 8.',
        actions,
        replied_by: { type: 'agent' },
      });
      widget.close();
    });

    it("take the hook's synchronous answer's actions; invalid ones fail the turn hook_rejected, and the attempt's record says why", async () => {
      const deployed = await deploy(service(), { hook_url: customer().hookUrl });
      const widget = await Widget.open(service(), deployed.deploymentId);
      const { conversation_id } = await widget.hello(await mintToken(deployed.secret, deployed.deploymentId));
      customer().state.behaviour = (call, res) =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            reply_text: 'Book here.',
            actions: call.body.text === 'good' ? [link] : [{ ...link, url: 'javascript:void(0)' }],
          }),
        );

      widget.send({ type: 'user_turn', client_turn_id: 'g', text: 'good', mode: 'text' });
      expect(await widget.next('reply')).toMatchObject({ text: 'Book here.', actions: [link] });
      widget.send({ type: 'user_turn', client_turn_id: 'b', text: 'bad', mode: 'text' });
      const failed = await widget.next('turn_failed');
      expect(failed.reason).toBe('hook_rejected');

      const { turns } = (await deployed.api.get(`/api/v1/conversations/${conversation_id}`)).body.data;
      expect(turns[0]).toMatchObject({ status: 'resolved', reply_actions: [link] });
      expect(turns[1]).toMatchObject({
        id: failed.turn_id,
        status: 'failed',
        failure_reason: 'hook_rejected',
        reply_text: null,
      });
      expect(turns[1].hook_attempts).toHaveLength(1);
      expect(turns[1].hook_attempts[0]).toMatchObject({
        outcome: 'failed',
        error: 'invalid_answer',
        error_detail: expect.stringMatching(/^actions\.0\.url: /),
        response: { status: 200 },
      });
      widget.close();
    });
  });
});
