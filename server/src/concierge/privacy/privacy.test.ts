import { readFileSync, existsSync } from 'node:fs';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  client,
  createPublishedAgent,
  describeEachStore,
  expectError,
  startService,
  type StoreKind,
  type TestService,
  waitFor,
} from '../../../test/harness.js';
import { type CustomerServer, mintToken, postReply, startCustomerServer, Widget } from '../../../test/concierge-kit.js';
import { complete, type ModelCall, startModelServer } from '../../../test/model-server.js';

/** The personal values said, and each way they could be written down. */
const SAID = {
  phone: '+44 7911 123456',
  email: 'jane.doe@example.com',
  card: '4111 1111 1111 1111',
  iban: 'GB82 WEST 1234 5698 7654 32',
  agentPhone: '+1 415 555 2671',
};
/** What is said in {@link talk}'s first turn (the guest's name telling conversations apart), and its reply. */
const first = (guest: string) => `Book a table for 2 under ${guest}, call me on ${SAID.phone} or mail ${SAID.email}`;
const FIRST_REPLY = `Booked. We call ${SAID.phone}. Confirmation goes to ${SAID.email}.`;
const NEEDLES = [
  '7911 123456',
  '7911123456',
  'jane.doe@',
  'jane.doe%40',
  '4111 1111 1111 1111',
  '4111111111111111',
  'GB82 WEST',
  'GB82WEST',
  '415 555 2671',
  '4155552671',
];

/** Every byte the store holds: the SQLite file and its write-ahead log, or every row of every table. */
async function storedBytes(service: TestService, kind: StoreKind): Promise<string> {
  const { db, location } = service.app.store;
  if (kind === 'sqlite')
    return [location, `${location}-wal`]
      .filter((f) => existsSync(f))
      .map((f) => readFileSync(f).toString('latin1'))
      .join('\n');
  const tables = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`.execute(
    db,
  );
  const rows: string[] = [];
  for (const { table_name } of tables.rows) {
    const dumped = await sql<{
      row: string;
    }>`SELECT row_to_json(t)::text AS row FROM ${sql.table(table_name)} t`.execute(db);
    rows.push(...dumped.rows.map((r) => r.row));
  }
  return rows.join('\n');
}

const holding = (text: string) => NEEDLES.filter((n) => text.includes(n));

describeEachStore('privacy: what is kept of what is said', (kind) => {
  let service: TestService;
  let customer: CustomerServer;

  beforeAll(async () => {
    service = await startService(kind);
    customer = await startCustomerServer((call, res) => {
      // The first turn is answered later, in parts; the others at once, with the agent's own number.
      if (call.body.text?.startsWith('Book'))
        return res.writeHead(202, { 'content-type': 'application/json' }).end('{}');
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({ reply_text: `Noted. Our desk is on ${SAID.agentPhone}, or write to desk@hotel.example.` }),
        );
    });
  });
  afterAll(async () => {
    await service?.close();
    await customer?.close();
  });

  const hotel = async (privacy: Record<string, unknown> | undefined) => {
    const { apiKey } = await service.newCustomer('Harbor Hotel');
    const api = client(service.url, apiKey);
    const agentId = await createPublishedAgent(api, 'Front desk');
    const created = await api.post('/api/v1/deployments', {
      agent_id: agentId,
      channel_config: { hook_url: customer.hookUrl, transcript_hook_url: customer.transcriptUrl },
      ...(privacy ? { runtime_config: { privacy } } : {}),
    });
    expect(created.status).toBe(201);
    const deploymentId: string = created.body.data.id;
    expect(created.body.data.agent_id).toBe(agentId);
    expect((await api.post(`/api/v1/deployments/${deploymentId}/activate`)).status).toBe(200);
    const secret: string = created.body.data.signing_secret;
    const widget = await Widget.open(service, deploymentId);
    const token = await mintToken(secret, deploymentId, { sub: `guest-${deploymentId}` });
    const ready = await widget.hello(token);
    return {
      api,
      agentId,
      deploymentId,
      secret,
      widget,
      token,
      conversationId: ready.conversation_id as string,
    };
  };

  /** A conversation full of personal values: typed, replied in parts and whole, written by a person, rated. */
  const talk = async (at: Awaited<ReturnType<typeof hotel>>, guest: string) => {
    const { api, widget, deploymentId, secret, conversationId } = at;
    widget.send({
      type: 'user_turn',
      client_turn_id: 'c1',
      text: first(guest),
      mode: 'text',
    });
    const accepted = await widget.next('turn_accepted');
    await widget.next('turn_acknowledged');
    const part = { conversation_id: conversationId, turn_id: accepted.turn_id };
    expect(
      (await postReply(service, deploymentId, { ...part, part: 0, text: `Booked. We call ${SAID.phone}.` }, secret))
        .status,
    ).toBe(202);
    expect((await postReply(service, deploymentId, { ...part, reply_text: FIRST_REPLY }, secret)).status).toBe(202);
    const replied = await widget.next('reply');
    widget.send({
      type: 'user_turn',
      client_turn_id: 'c2',
      text: `Pay with ${SAID.card}, refunds to ${SAID.iban}`,
      mode: 'text',
    });
    const second = await widget.next('turn_accepted');
    const answered = await widget.next('reply');
    widget.send({ type: 'feedback', turn_id: second.turn_id, rating: 'up', comment: `Text me on ${SAID.phone}` });
    await widget.next('feedback_recorded');
    expect((await api.post(`/api/v1/conversations/${conversationId}/takeover`, { name: 'Maria' })).status).toBe(200);
    const message = await api.post(
      `/api/v1/conversations/${conversationId}/messages`,
      { text: `Maria here for ${guest}: I have ${SAID.email} and ${SAID.phone} on file`, name: 'Maria' },
      { headers: { 'idempotency-key': `m-${conversationId}` } },
    );
    expect(message.status).toBe(200);
    await widget.next('message');
    return { accepted, replied, second, answered };
  };

  it('redacted: every store holds [kind] where the values were; the hook and this socket got them as said', async () => {
    const at = await hotel({ keep: 'redacted' });
    const { accepted, replied, second, answered } = await talk(at, 'Ada');
    const { api, conversationId } = at;

    // The customer's hook acts on the words as said; this socket shows them as said.
    expect(customer.calls.find((c) => c.body.turn_id === accepted.turn_id)?.body.text).toContain(SAID.phone);
    expect(replied.text).toContain(SAID.email);
    expect(answered.text).toContain(SAID.agentPhone);
    expect(second.text).toBe(`Pay with ${SAID.card}, refunds to ${SAID.iban}`);

    // The history, its search, the export.
    const detail = await api.get(`/api/v1/conversations/${conversationId}`);
    expect(detail.status).toBe(200);
    const [one, two] = detail.body.data.turns;
    expect(one.text).toBe('Book a table for 2 under Ada, call me on [phone] or mail [email]');
    expect(one.words).toEqual({ kept: 'redacted', text_chars: first('Ada').length, reply_chars: FIRST_REPLY.length });
    expect(one.reply_text).toBe('Booked. We call [phone]. Confirmation goes to [email].');
    expect(one.parts).toEqual([expect.objectContaining({ text: 'Booked. We call [phone].' })]);
    expect(two.reply_text).toBe('Noted. Our desk is on [phone], or write to [email].');
    expect(two.feedback.comment).toBe('Text me on [phone]');
    expect(holding(JSON.stringify(detail.body))).toEqual([]);
    expect((await api.get(`/api/v1/conversations?search=${encodeURIComponent('7911')}`)).body.data).toEqual([]);
    expect((await api.get(`/api/v1/conversations?search=${encodeURIComponent('Pay with')}`)).body.data).toHaveLength(1);
    const exported = await api.get(`/api/v1/conversations/export?deployment_id=${at.deploymentId}`);
    expect(exported.status).toBe(200);
    expect(String(JSON.stringify(exported.body))).toContain('[email]');
    expect(holding(JSON.stringify(exported.body))).toEqual([]);

    // A reconnecting widget replays what is stored.
    const again = await Widget.open(service, at.deploymentId);
    await again.hello(at.token, { conversation_id: conversationId, last_seq: 0 });
    const replayed = await again.next('reply');
    expect(replayed.text).toBe('Booked. We call [phone]. Confirmation goes to [email].');
    again.close();

    // The transcript hook, and the records of every delivery.
    await waitFor(async () => customer.transcript.some((t) => t.body.type === 'message.created'));
    const events = customer.transcript.filter((t) => t.body.conversation_id === conversationId);
    expect(events.find((t) => t.body.type === 'turn.created')?.body.data.text).toContain('[phone]');
    expect(holding(events.map((t) => t.raw).join('\n'))).toEqual([]);
    await waitFor(
      async () =>
        (await api.get(`/api/v1/deliveries?conversation_id=${conversationId}&kind=transcript`)).body.data.length >= 5,
    );
    const deliveries = await api.get(`/api/v1/deliveries?conversation_id=${conversationId}`);
    expect(deliveries.body.data.some((d: { kind: string }) => d.kind === 'turn_hook')).toBe(true);
    expect(holding(JSON.stringify(deliveries.body))).toEqual([]);

    // Counted by kind.
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const analytics = await api.get(`/api/v1/analytics?from=${day(0)}&to=${day(1)}&deployment_id=${at.deploymentId}`);
    expect(analytics.status).toBe(200);
    expect(analytics.body.data.totals.redactions).toEqual({
      email: 4,
      phone: 4,
      card: 1,
      iban: 1,
      name: 0,
      address: 0,
    });

    // Nothing stored anywhere, nor logged.
    at.widget.close();
    expect(holding(await storedBytes(service, kind))).toEqual([]);
    expect(holding(service.logs.join('\n'))).toEqual([]);
  });

  it('metadata: no words in any table, and the history says so; lengths, outcomes and feedback stay', async () => {
    const at = await hotel({ keep: 'metadata' });
    await talk(at, 'Grace');
    const detail = await at.api.get(`/api/v1/conversations/${at.conversationId}`);
    const [one, two] = detail.body.data.turns;
    expect(one).toMatchObject({ text: '', reply_text: '', status: 'resolved' });
    expect(one.words).toEqual({ kept: 'metadata', text_chars: first('Grace').length, reply_chars: FIRST_REPLY.length });
    expect(two.feedback).toMatchObject({ rating: 'up', comment: '' });
    expect(two.words.kept).toBe('metadata');
    await waitFor(async () =>
      customer.transcript.some(
        (t) => t.body.conversation_id === at.conversationId && t.body.type === 'message.created',
      ),
    );
    const created = customer.transcript.find(
      (t) => t.body.conversation_id === at.conversationId && t.body.type === 'turn.created',
    );
    expect(created?.body.data.text).toBe('');
    at.widget.close();
    const stored = await storedBytes(service, kind);
    expect(holding(stored)).toEqual([]);
    // Not even the words around the values.
    expect(stored.includes('under Grace')).toBe(false);
    expect(stored.includes('for Grace')).toBe(false);
  });

  it('a change of what is kept applies from then on, and the audit log records it', async () => {
    const at = await hotel(undefined);
    const { api, widget, deploymentId, conversationId } = at;
    const say = async (text: string) => {
      widget.send({ type: 'user_turn', client_turn_id: `c${Date.now()}`, text, mode: 'text' });
      await widget.next('reply');
    };
    const lastStored = async () => (await api.get(`/api/v1/conversations/${conversationId}`)).body.data.turns.at(-1);
    await say(`Mail ${SAID.email}`);
    const changed = await api.put(`/api/v1/deployments/${deploymentId}`, {
      runtime_config: { privacy: { keep: 'redacted', redact: ['email'] } },
    });
    expect(changed.status).toBe(200);
    await say(`Mail ${SAID.email} again`);
    expect(await lastStored()).toMatchObject({ text: 'Mail [email] again', words: { kept: 'redacted' } });
    const turns = (await api.get(`/api/v1/conversations/${conversationId}`)).body.data.turns;
    expect(turns[0]).toMatchObject({ text: `Mail ${SAID.email}`, words: { kept: 'everything' } });
    const audit = await api.get('/api/v1/audit-log?action=deployment.privacy_changed');
    expect(audit.status).toBe(200);
    expect(audit.body.data).toHaveLength(1);
    expect(audit.body.data[0]).toMatchObject({
      action: 'deployment.privacy_changed',
      target: { type: 'deployment', id: deploymentId },
      detail: { keep_before: 'everything', keep_after: 'redacted', redact: 'email' },
    });
    widget.close();
  });

  it('names and addresses: found by the model before the turn is stored, then redacted wherever they are said', async () => {
    const asked: ModelCall[] = [];
    const model = await startModelServer((call, res) => {
      asked.push(call);
      // One value the message does not hold: a guess is never redacted.
      const values = [
        { kind: 'name', text: 'Ada Lovelace' },
        { kind: 'address', text: '12 Harbour Street, Bristol' },
        { kind: 'name', text: 'Charles Babbage' },
      ];
      complete(res, call.body.model, JSON.stringify({ values }));
    });
    try {
      const at = await hotel({ keep: 'redacted', redact: ['phone', 'name', 'address'] });
      const { api, agentId, widget, conversationId } = at;
      const endpoint = await api.post('/api/v1/model-endpoints', { name: 'Privacy model', base_url: model.baseUrl });
      const draft = (await api.get(`/api/v1/agents/${agentId}/spec`)).body.data.draft_spec;
      const saved = await api.put(`/api/v1/agents/${agentId}`, {
        draft_spec: { ...draft, evaluation: { endpoint_id: endpoint.body.data.id, model: 'privacy-model' } },
      });
      expect(saved.status).toBe(200);
      expect((await api.post(`/api/v1/agents/${agentId}/publish`)).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1_100)); // the deployment's settings are cached for a second
      widget.send({
        type: 'user_turn',
        client_turn_id: 'n1',
        text: 'I am Ada Lovelace, 12 Harbour Street, Bristol, call +44 7911 123456',
        mode: 'text',
      });
      const reply = await widget.next('reply');
      expect(reply.text).toContain(SAID.agentPhone);
      // The model was asked the visitor's words as data, for the kinds asked.
      const question = asked.find((c) => c.body.response_format?.json_schema.name === 'personal_values');
      expect(question?.body.messages.at(-2)?.content).toContain('Ada Lovelace');
      // The person writing back says the name again: redacted too.
      expect((await api.post(`/api/v1/conversations/${conversationId}/takeover`, { name: 'Maria' })).status).toBe(200);
      await api.post(`/api/v1/conversations/${conversationId}/messages`, {
        text: 'Welcome back, ada lovelace!',
        name: 'Maria',
      });
      const turns = (await api.get(`/api/v1/conversations/${conversationId}`)).body.data.turns;
      expect(turns[0].text).toBe('I am [name], [address], call [phone]');
      const exported = JSON.stringify(
        (await api.get(`/api/v1/conversations/export?deployment_id=${at.deploymentId}`)).body,
      );
      expect(exported).toContain('Welcome back, [name]!');
      expect(exported).not.toMatch(/lovelace|harbour street/i);
      widget.close();
      expect((await storedBytes(service, kind)).match(/lovelace|harbour street/i)).toBeNull();
      const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
      const analytics = await api.get(`/api/v1/analytics?from=${day(0)}&to=${day(1)}&deployment_id=${at.deploymentId}`);
      expect(analytics.body.data.totals.redactions).toMatchObject({ name: 2, address: 1, phone: 2 });
    } finally {
      await model.close();
    }
  });

  it('refuses a privacy setting it cannot keep, naming the field', async () => {
    const { apiKey } = await service.newCustomer('Other');
    const api = client(service.url, apiKey);
    const agentId = await createPublishedAgent(api, 'Desk');
    for (const privacy of [
      { keep: 'some' },
      { redact: ['ssn'] },
      { redact: [] },
      { retention_days: 0 },
      { keep: 'redacted', extra: 1 },
    ]) {
      const refused = await api.post('/api/v1/deployments', {
        agent_id: agentId,
        channel_config: {},
        runtime_config: { privacy },
      });
      expectError(refused, 400, 'invalid_request');
      expect(JSON.stringify(refused.body.error.details)).toContain('privacy');
    }
  });
});
