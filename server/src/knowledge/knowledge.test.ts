import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  client,
  type Client,
  createPublishedAgent,
  describeEachStore,
  expectError,
  startService,
  type StoreKind,
  type TestService,
  waitFor,
} from '../../test/harness.js';
import { type CustomerServer, deployAgent, mintToken, startCustomerServer, Widget } from '../../test/concierge-kit.js';
import { startModelServer, writes } from '../../test/model-server.js';

const GUIDE = [
  '# Dining',
  '',
  'Breakfast is served from 7 to 10:30 in the garden room, on weekends until 11.',
  '',
  '## Room service',
  '',
  'Room service brings dinner to your room until midnight.',
  '',
  '# Parking',
  '',
  'The garage behind the hotel has forty spaces; a night costs 18 euros.',
  '',
  '# Spa',
  '',
  'The sauna and the pool are open from 9 to 21. Towels wait at the spa desk.',
].join('\n');

describeEachStore('knowledge bases', (kind: StoreKind) => {
  let service: TestService;
  let api: Client;

  beforeAll(async () => {
    service = await startService(kind);
    api = client(service.url, (await service.newCustomer('Hotel')).apiKey);
  });
  afterAll(() => service?.close());

  const newBase = async (language = 'en') => {
    const created = await api.post('/api/v1/knowledge-bases', { name: 'Guest guide', language });
    expect(created.status).toBe(201);
    return created.body.data.id as string;
  };

  it('cuts a document into passages with their headings and anchors, and finds the passage a question asks for', async () => {
    const base = await newBase();
    const added = await api.post(`/api/v1/knowledge-bases/${base}/documents`, {
      title: 'Guest guide',
      text: GUIDE,
      format: 'markdown',
      url: 'https://harbor.example/guide',
    });
    expect(added.status).toBe(201);
    expect(added.body.data).toMatchObject({ knowledge_base_id: base, format: 'markdown', chunk_count: 4 });
    const documentId = added.body.data.id;
    const chunks = (await api.get(`/api/v1/knowledge-bases/${base}/documents/${documentId}/chunks`)).body.data;
    expect(chunks.map((c: any) => [c.position, c.heading, c.url])).toEqual([
      [0, 'Dining', 'https://harbor.example/guide#dining'],
      [1, 'Dining › Room service', 'https://harbor.example/guide#room-service'],
      [2, 'Parking', 'https://harbor.example/guide#parking'],
      [3, 'Spa', 'https://harbor.example/guide#spa'],
    ]);

    const search = async (q: string) =>
      (await api.get(`/api/v1/knowledge-bases/${base}/search?q=${encodeURIComponent(q)}`)).body.data;
    const breakfast = await search('When is breakfast served?');
    expect(breakfast[0]).toMatchObject({ heading: 'Dining', document_id: documentId, title: 'Guest guide' });
    expect(breakfast[0].matched).toEqual(expect.arrayContaining(['breakfast', 'served']));
    expect(breakfast[0].score).toBeGreaterThan(0);
    // Stemmed: "parked" finds "Parking", "towel" finds "Towels".
    expect((await search('where can I park my car'))[0].heading).toBe('Parking');
    expect((await search('towel'))[0].heading).toBe('Spa');
    expect(await search('helicopter')).toEqual([]);
    expectError(await api.get(`/api/v1/knowledge-bases/${base}/search?q=`), 400, 'invalid_request');
  });

  it('replaces a changed document’s passages at once, and deleting takes everything along', async () => {
    const base = await newBase();
    const doc = (
      await api.post(`/api/v1/knowledge-bases/${base}/documents`, { title: 'Spa', text: 'The sauna opens at 9.' })
    ).body.data;
    const changed = await api.put(`/api/v1/knowledge-bases/${base}/documents/${doc.id}`, {
      text: 'The hammam opens at 10.',
    });
    expect(changed.body.data).toMatchObject({ chunk_count: 1, chars: 23 });
    const search = async (q: string) =>
      (await api.get(`/api/v1/knowledge-bases/${base}/search?q=${q}`)).body.data.map((c: any) => c.text);
    expect(await search('sauna')).toEqual([]);
    expect(await search('hammam')).toEqual(['The hammam opens at 10.']);
    // A new title re-cuts the stored text: its passages carry it.
    await api.put(`/api/v1/knowledge-bases/${base}/documents/${doc.id}`, { title: 'Wellness' });
    expect((await api.get(`/api/v1/knowledge-bases/${base}/search?q=hammam`)).body.data[0].title).toBe('Wellness');
    expect((await api.del(`/api/v1/knowledge-bases/${base}/documents/${doc.id}`)).status).toBe(200);
    expect(await search('hammam')).toEqual([]);
    expectError(await api.get(`/api/v1/knowledge-bases/${base}/documents/${doc.id}`), 404, 'not_found');

    await api.post(`/api/v1/knowledge-bases/${base}/documents`, { title: 'Pool', text: 'The pool is heated.' });
    expect((await api.del(`/api/v1/knowledge-bases/${base}`)).status).toBe(200);
    expectError(await api.get(`/api/v1/knowledge-bases/${base}/search?q=pool`), 404, 'not_found');
    const left = await service.app.store.db
      .selectFrom('knowledge_chunks')
      .select('id')
      .where('base_id', '=', base)
      .execute();
    expect(left).toEqual([]);
  });

  it("stems in the base's language on PostgreSQL (English on SQLite, as the README says), and keeps each customer's bases to itself", async () => {
    const base = await newBase('de');
    await api.post(`/api/v1/knowledge-bases/${base}/documents`, {
      title: 'Hausordnung',
      text: 'Das Frühstück gibt es von 7 bis 10 Uhr. Die Zimmer sind ruhig.',
    });
    const found = async (q: string) =>
      (await api.get(`/api/v1/knowledge-bases/${base}/search?q=${encodeURIComponent(q)}`)).body.data.length;
    expect(await found('Frühstück')).toBe(1);
    // "Zimmern" is "Zimmer" to German's stemmer only.
    expect(await found('Zimmern')).toBe(kind === 'postgres' ? 1 : 0);

    const other = client(service.url, (await service.newCustomer('Other')).apiKey);
    expectError(await other.get(`/api/v1/knowledge-bases/${base}`), 404, 'not_found');
    expectError(await other.get(`/api/v1/knowledge-bases/${base}/search?q=Frühstück`), 404, 'not_found');
    expectError(
      await other.post(`/api/v1/knowledge-bases/${base}/documents`, { title: 'x', text: 'y' }),
      404,
      'not_found',
    );
    expect((await other.get('/api/v1/knowledge-bases')).body.meta.total_count).toBe(0);
  });

  it('holds at most 100 bases per customer, saying so', async () => {
    const own = client(service.url, (await service.newCustomer('Chain')).apiKey);
    for (let i = 0; i < 100; i++)
      expect((await own.post('/api/v1/knowledge-bases', { name: `Hotel ${i}` })).status).toBe(201);
    const refused = await own.post('/api/v1/knowledge-bases', { name: 'One more' });
    expectError(refused, 409, 'invalid_state');
    expect(refused.body.error.message).toBe('A customer has at most 100 knowledge bases');
    expect((await api.post('/api/v1/knowledge-bases', { name: 'Another customer is not held back' })).status).toBe(201);
  });

  it('refuses what it cannot take, in plain words', async () => {
    const base = await newBase();
    const refused = async (body: unknown, path: string) => {
      const answer = await api.post(`/api/v1/knowledge-bases/${base}/documents`, body);
      expectError(answer, 400, 'invalid_request');
      expect(answer.body.error.details.map((d: any) => d.path)).toContain(path);
    };
    await refused({ title: 'Empty', text: '   ' }, 'text');
    await refused({ title: 'Huge', text: 'x'.repeat(1_000_001) }, 'text');
    await refused({ title: 'Page', text: 'x', format: 'pdf' }, 'format');
    await refused({ title: 'Link', text: 'x', url: 'javascript:alert(1)' }, 'url');
    expectError(
      await api.post('/api/v1/knowledge-bases', { name: 'x', language: 'not a language' }),
      400,
      'invalid_request',
    );
  });
});

describeEachStore("a knowledge base in an agent's turns", (kind: StoreKind) => {
  let service: TestService;
  let customer: CustomerServer;
  let model: Awaited<ReturnType<typeof startModelServer>>;

  beforeAll(async () => {
    customer = await startCustomerServer((_call, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ reply_text: 'Noted.' })),
    );
    model = await startModelServer(writes('From the guide.'));
    service = await startService(kind, { env: { HOOK_ALLOWED_HOSTS: '*@127.0.0.1' } });
  });
  afterAll(async () => {
    await service?.close();
    await customer?.close();
    await model?.close();
  });

  /** A customer with the guest guide in a base, and an agent using it. */
  const withGuide = async () => {
    const api = client(service.url, (await service.newCustomer('Hotel')).apiKey);
    const base = (await api.post('/api/v1/knowledge-bases', { name: 'Guide' })).body.data.id;
    const doc = await api.post(`/api/v1/knowledge-bases/${base}/documents`, {
      title: 'Guest guide',
      text: GUIDE,
      format: 'markdown',
      url: 'https://harbor.example/guide',
    });
    return { api, base, documentId: doc.body.data.id as string };
  };

  it('gives the turn hook the passages for the visitor’s words, and the conversation keeps which', async () => {
    const { api, base, documentId } = await withGuide();
    const agentId = await createPublishedAgent(api);
    const refused = await api.put(`/api/v1/agents/${agentId}`, {
      knowledge_base_id: '00000000-0000-4000-8000-000000000000',
    });
    expectError(refused, 400, 'invalid_request');
    expect(refused.body.error.details[0].path).toBe('knowledge_base_id');
    expect((await api.put(`/api/v1/agents/${agentId}`, { knowledge_base_id: base })).status).toBe(200);
    const created = await api.post('/api/v1/deployments', {
      agent_id: agentId,
      channel_config: { hook_url: customer.hookUrl },
    });
    const deploymentId = created.body.data.id;
    await api.post(`/api/v1/deployments/${deploymentId}/activate`);
    const widget = await Widget.open(service, deploymentId);
    const ready = await widget.hello(await mintToken(created.body.data.signing_secret, deploymentId));
    const before = customer.calls.length;
    // Nothing in the guide: none (and no turn before to follow up).
    widget.send({ type: 'user_turn', client_turn_id: 'k0', text: 'helicopter', mode: 'text' });
    await waitFor(async () => customer.calls.length > before);
    expect(customer.calls.at(-1)!.body.knowledge).toEqual([]);
    widget.send({ type: 'user_turn', client_turn_id: 'k1', text: 'Where can I park?', mode: 'text' });
    await waitFor(async () => customer.calls.length > before + 1);
    const knowledge = customer.calls.at(-1)!.body.knowledge;
    expect(knowledge[0]).toMatchObject({
      document_id: documentId,
      title: 'Guest guide',
      url: 'https://harbor.example/guide#parking',
      text: 'The garage behind the hotel has forty spaces; a night costs 18 euros.',
    });
    expect(knowledge.length).toBeLessThanOrEqual(5);
    const detail = await waitFor(async () => {
      const turns = (await api.get(`/api/v1/conversations/${ready.conversation_id}`)).body.data.turns;
      const turn = turns.find((t: any) => t.text === 'Where can I park?');
      return turn?.knowledge && turn;
    });
    expect(detail.knowledge[0]).toEqual({
      chunk_id: knowledge[0].chunk_id,
      document_id: documentId,
      title: 'Guest guide',
      url: 'https://harbor.example/guide#parking',
      score: knowledge[0].score,
    });
    // A short follow-up is searched with the turn before it: "how much?" is about parking.
    widget.send({ type: 'user_turn', client_turn_id: 'k2', text: 'How much is it?', mode: 'text' });
    await waitFor(async () => customer.calls.length > before + 2);
    expect(customer.calls.at(-1)!.body.knowledge.map((k: any) => k.url)).toEqual([
      'https://harbor.example/guide#parking',
    ]);
    // A whole new question is not: it stands on its own words.
    widget.send({ type: 'user_turn', client_turn_id: 'k3', text: 'Is the sauna open late?', mode: 'text' });
    await waitFor(async () => customer.calls.length > before + 3);
    expect(customer.calls.at(-1)!.body.knowledge.map((k: any) => k.url)).toEqual(['https://harbor.example/guide#spa']);
  });

  /** A visitor of a model agent (on the model at `baseUrl`) whose knowledge base holds the guest guide. */
  const modelAgentVisitor = async (baseUrl: string) => {
    const { api, base } = await withGuide();
    const endpoint = await api.post('/api/v1/model-endpoints', { name: 'T', base_url: baseUrl });
    const agent = await deployAgent(service, api, {
      responder: { type: 'model', endpoint_id: endpoint.body.data.id, model: 'm' },
    });
    await api.put(`/api/v1/agents/${agent.agentId}`, { knowledge_base_id: base });
    return (await agent.visitor()).widget;
  };

  it("gives a model agent the passages to answer from, as data beside the visitor's message", async () => {
    const widget = await modelAgentVisitor(model.baseUrl);
    widget.send({ type: 'user_turn', client_turn_id: 'k1', text: 'Are there towels at the spa?', mode: 'text' });
    expect((await widget.next('reply')).text).toBe('From the guide.');
    const messages = model.calls.at(-1)!.body.messages;
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'user']);
    expect(messages[0]!.content).toContain("Answer from the passages of the agent's knowledge base");
    expect(messages[0]!.content).not.toContain('sauna');
    const data = JSON.parse(messages[1]!.content!.replace(/^\[Data\] /, ''));
    expect(data.passages[0]).toEqual({
      number: 1,
      source: 'Guest guide › Spa',
      text: expect.stringContaining('The sauna and the pool are open from 9 to 21.'),
    });
    expect(messages[2]!.content).toBe('Are there towels at the spa?');
  });

  it("links a model's reply to the passages it cites, and the visitor never sees or hears the numbers", async () => {
    const citing = await startModelServer(
      writes('Towels wait at the spa desk [1]. The garage costs 18 euros a night [2, 1]. Anything else?'),
    );
    try {
      const widget = await modelAgentVisitor(citing.baseUrl);
      widget.send({ type: 'user_turn', client_turn_id: 'k1', text: 'Towels at the spa, and parking?', mode: 'text' });
      const reply = await widget.next('reply');
      expect(reply.text).toBe('Towels wait at the spa desk. The garage costs 18 euros a night. Anything else?');
      const data = JSON.parse(
        citing.calls
          .at(-1)!
          .body.messages.at(-2)!
          .content!.replace(/^\[Data\] /, ''),
      );
      expect(data.passages.slice(0, 2).map((p: { source: string }) => p.source)).toEqual([
        'Guest guide › Spa',
        'Guest guide › Parking',
      ]);
      expect(reply.actions).toEqual([
        { type: 'link', label: 'Guest guide', url: 'https://harbor.example/guide#spa' },
        { type: 'link', label: 'Guest guide', url: 'https://harbor.example/guide#parking' },
      ]);
      const parts = widget.frames.filter((f) => f.type === 'reply_part').map((f) => f.text);
      // The parts said so far (the last sentence comes with the reply).
      expect(parts.join('')).toBe('Towels wait at the spa desk. The garage costs 18 euros a night. ');
    } finally {
      await citing.close();
    }
  });
});

describeEachStore('the knowledge responder', (kind: StoreKind) => {
  let service: TestService;

  beforeAll(async () => {
    service = await startService(kind);
  });
  afterAll(() => service?.close());

  const knowledgeAgent = async (language = 'en-US') => {
    const api = client(service.url, (await service.newCustomer('Hotel')).apiKey);
    const base = (await api.post('/api/v1/knowledge-bases', { name: 'Guide' })).body.data.id;
    await api.post(`/api/v1/knowledge-bases/${base}/documents`, {
      title: 'Guest guide',
      text: GUIDE,
      format: 'markdown',
      url: 'https://harbor.example/guide',
    });
    const agent = await deployAgent(service, api, { language, responder: { type: 'knowledge' } });
    await api.put(`/api/v1/agents/${agent.agentId}`, { knowledge_base_id: base });
    return { api, ...(await agent.visitor()) };
  };
  const ask = (widget: Widget, text: string) =>
    widget.send({ type: 'user_turn', client_turn_id: `c-${Math.random()}`, text, mode: 'text' });

  it('answers from the best passage with its most relevant sentences, citing where they come from', async () => {
    const { widget, api, conversationId } = await knowledgeAgent();
    ask(widget, 'Do you have towels at the spa?');
    expect(await widget.next('reply')).toMatchObject({
      text: 'Towels wait at the spa desk.',
      actions: [{ type: 'link', label: 'Guest guide', url: 'https://harbor.example/guide#spa' }],
    });
    ask(widget, 'How much does parking cost a night?');
    expect((await widget.next('reply')).text).toBe(
      'The garage behind the hotel has forty spaces; a night costs 18 euros.',
    );
    const turns = (await api.get(`/api/v1/conversations/${conversationId}`)).body.data.turns;
    expect(turns.map((t: any) => [t.status, t.knowledge[0].url])).toEqual([
      ['resolved', 'https://harbor.example/guide#spa'],
      ['resolved', 'https://harbor.example/guide#parking'],
    ]);
  });

  it("says it does not know, in the conversation's language, and its quick reply hands over to a person", async () => {
    const { widget, api, conversationId } = await knowledgeAgent('de-DE');
    ask(widget, 'Kann ich einen Hubschrauber mieten?');
    const unknown = await widget.next('reply');
    expect(unknown).toEqual(
      expect.objectContaining({
        text: 'Das weiß ich leider nicht.',
        actions: [
          { type: 'quick_reply', label: 'Mit einer Person sprechen', text: 'Ich möchte mit einer Person sprechen.' },
        ],
      }),
    );
    ask(widget, unknown.actions[0].text);
    expect((await widget.next('reply')).text).toBe('Jemand aus dem Team antwortet Ihnen hier.');
    const detail = (await api.get(`/api/v1/conversations/${conversationId}`)).body.data;
    expect(detail).toMatchObject({ needs_person: true, handoff_reason: 'The visitor asked for a person' });
  });

  it('refuses a threshold it could not use, naming it', async () => {
    const api = client(service.url, (await service.newCustomer('Hotel')).apiKey);
    const agentId = await createPublishedAgent(api);
    await api.put(`/api/v1/agents/${agentId}`, { draft_spec: { responder: { type: 'knowledge', min_match: 2 } } });
    const refused = await api.post(`/api/v1/agents/${agentId}/publish`);
    expectError(refused, 400, 'invalid_request');
    expect(refused.body.error.details[0].path).toBe('draft_spec.responder.min_match');
  });
});
