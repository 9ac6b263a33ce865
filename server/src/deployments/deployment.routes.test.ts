import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Client,
  client,
  createPublishedAgent,
  createReadyAgent,
  describeEachStore,
  expectError,
  type TestService,
  startService,
} from '../../test/harness.js';

const SECRET = /^whsec_[0-9A-Za-z]{32,}$/;
const hook = { hook_url: 'https://customer.example/hooks/turn' };

describeEachStore('deployments', (kind) => {
  let service: TestService;
  let api: Client;
  let published: string;
  let draft: string;

  beforeAll(async () => {
    service = await startService(kind);
    api = client(service.url, (await service.newCustomer()).apiKey);
    published = await createPublishedAgent(api, 'Concierge');
    draft = await createReadyAgent(api, 'Still a draft');
  });
  afterAll(() => service.close());

  const create = (body: object) => api.post('/api/v1/deployments', body);

  describe('create and read', () => {
    it('creates an inactive deployment with defaults and shows the secret only once', async () => {
      const res = await create({ agent_id: published });
      expect(res.status).toBe(201);
      const d = res.body.data;
      expect(d).toMatchObject({
        agent_id: published,
        agent_name: 'Concierge',
        environment: 'production',
        call_direction: 'inbound',
        status: 'inactive',
        channel_config: {},
        engagement_rules: {},
        runtime_config: {},
        deployed_at: null,
      });
      expect(d.signing_secret).toMatch(SECRET);
      const read = await api.get(`/api/v1/deployments/${d.id}`);
      expect(read.status).toBe(200);
      const { signing_secret: _secret, ...withoutSecret } = d;
      expect(read.body.data).toEqual(withoutSecret);
      expect(JSON.stringify(read.body)).not.toContain(d.signing_secret);
      const listed = await api.get('/api/v1/deployments');
      expect(JSON.stringify(listed.body)).not.toContain(d.signing_secret);
    });

    it('keeps free-form keys of the config objects as written', async () => {
      const res = await create({
        agent_id: published,
        environment: 'staging',
        call_direction: 'outbound',
        channel_config: {
          ...hook,
          allowed_origins: ['https://hotel.example', 'http://localhost:8788'],
          widget: { title: 'Ask us', accent_color: '#0a7cff', position: 'bottom-left' },
          extra: { a: 1 },
        },
        engagement_rules: { max_pending_turns: 2, custom: true },
        runtime_config: { hook_timeout_ms: 2000, reply_timeout_s: 30 },
      });
      expect(res.status).toBe(201);
      expect(res.body.data.channel_config.extra).toEqual({ a: 1 });
      expect(res.body.data.engagement_rules).toEqual({ max_pending_turns: 2, custom: true });
    });

    it('stores keys it does not read as sent and names each in meta.warnings with the key it most likely meant', async () => {
      const res = await create({
        agent_id: published,
        channel_config: {
          hookUrl: 'https://customer.example/h',
          'Transcript-Hook-URL': 'https://customer.example/t',
          alowed_origins: [],
          crm: { id: 7 },
          widget: { accentColour: '#123456', title: 'Hi' },
        },
        engagement_rules: { turns_per_minut: 5 },
        runtime_config: { reply_timeout_s: 30 },
      });
      expect(res.status).toBe(201);
      expect(res.body.meta.warnings).toEqual([
        { path: 'channel_config.hookUrl', message: 'unknown key, did you mean hook_url?' },
        { path: 'channel_config.Transcript-Hook-URL', message: 'unknown key, did you mean transcript_hook_url?' },
        { path: 'channel_config.alowed_origins', message: 'unknown key, did you mean allowed_origins?' },
        {
          path: 'channel_config.crm',
          message:
            'unknown key, stored as sent but not read (known: hook_url, transcript_hook_url, allowed_origins, widget)',
        },
        { path: 'channel_config.widget.accentColour', message: 'unknown key, did you mean accent_color?' },
        { path: 'engagement_rules.turns_per_minut', message: 'unknown key, did you mean turns_per_minute?' },
      ]);
      expect(res.body.data.channel_config).toEqual({
        hookUrl: 'https://customer.example/h',
        'Transcript-Hook-URL': 'https://customer.example/t',
        alowed_origins: [],
        crm: { id: 7 },
        widget: { accentColour: '#123456', title: 'Hi' },
      });
      // The typo is what activation then trips on: the warning said so first.
      expectError(await api.post(`/api/v1/deployments/${res.body.data.id}/activate`), 409, 'invalid_state');

      const fixed = await api.put(`/api/v1/deployments/${res.body.data.id}`, {
        channel_config: hook,
        runtime_config: { hook_timeout: 900 },
      });
      expect(fixed.status).toBe(200);
      expect(fixed.body.meta).toEqual({
        warnings: [{ path: 'runtime_config.hook_timeout', message: 'unknown key, did you mean hook_timeout_ms?' }],
      });
      const clean = await api.put(`/api/v1/deployments/${res.body.data.id}`, { runtime_config: {} });
      expect(clean.body.meta).toEqual({ warnings: [] });
    });

    it("warns when the service's recogniser is chosen on a service that has none, and stores the choice", async () => {
      const res = await create({ agent_id: published, runtime_config: { speech_recognition: 'service' } });
      expect(res.status).toBe(201);
      expect(res.body.data.runtime_config.speech_recognition).toBe('service');
      expect(res.body.meta.warnings).toEqual([
        {
          path: 'runtime_config.speech_recognition',
          message:
            'this service recognises no speech (SPEECH_TO_TEXT or SPEECH_TO_TEXT_URL is not set): until it does, visitors are told voice is not available and to type',
        },
      ]);
      const auto = await api.put(`/api/v1/deployments/${res.body.data.id}`, {
        runtime_config: { speech_recognition: 'auto' },
      });
      expect(auto.body.meta).toEqual({ warnings: [] });
    });

    it('warns when hands-free is chosen on a service that recognises nothing, stores it, and refuses a mode it does not know', async () => {
      const res = await create({ agent_id: published, runtime_config: { voice_mode: 'hands_free' } });
      expect(res.status).toBe(201);
      expect(res.body.data.runtime_config.voice_mode).toBe('hands_free');
      expect(res.body.meta.warnings).toEqual([
        {
          path: 'runtime_config.voice_mode',
          message:
            "hands-free voice needs the service's recognition (SPEECH_TO_TEXT or SPEECH_TO_TEXT_URL is not set): until it has one, visitors press the mic for each utterance",
        },
      ]);
      const ptt = await api.put(`/api/v1/deployments/${res.body.data.id}`, {
        runtime_config: { voice_mode: 'push_to_talk' },
      });
      expect(ptt.body.meta).toEqual({ warnings: [] });
      const wrong = await api.put(`/api/v1/deployments/${res.body.data.id}`, {
        runtime_config: { voice_mode: 'open' },
      });
      expectError(wrong, 400, 'invalid_request');
      expect(wrong.body.error.details.map((d: { path: string }) => d.path)).toEqual(['runtime_config.voice_mode']);
    });

    it.each([
      [{}, 'agent_id'],
      [{ agent_id: 'nope' }, 'agent_id'],
      [{ agent_id: '00000000-0000-4000-8000-000000000000', environment: 'qa' }, 'environment'],
      [{ agent_id: '00000000-0000-4000-8000-000000000000', call_direction: 'sideways' }, 'call_direction'],
      [
        { agent_id: '00000000-0000-4000-8000-000000000000', channel_config: { hook_url: 'ftp://x.example' } },
        'channel_config.hook_url',
      ],
      [
        {
          agent_id: '00000000-0000-4000-8000-000000000000',
          channel_config: { hook_url: 'https://user:pass@hooks.example/turn' },
        },
        'channel_config.hook_url',
      ],
      [
        {
          agent_id: '00000000-0000-4000-8000-000000000000',
          channel_config: { transcript_hook_url: 'https://token@hooks.example/events' },
        },
        'channel_config.transcript_hook_url',
      ],
      [
        {
          agent_id: '00000000-0000-4000-8000-000000000000',
          channel_config: { hook_url: 'https://:secret@hooks.example/turn' },
        },
        'channel_config.hook_url',
      ],
      [
        { agent_id: '00000000-0000-4000-8000-000000000000', channel_config: { hook_url: '' } },
        'channel_config.hook_url',
      ],
      [
        { agent_id: '00000000-0000-4000-8000-000000000000', channel_config: { transcript_hook_url: 'not a url' } },
        'channel_config.transcript_hook_url',
      ],
      [
        { agent_id: '00000000-0000-4000-8000-000000000000', channel_config: { allowed_origins: [''] } },
        'channel_config.allowed_origins.0',
      ],
      [
        {
          agent_id: '00000000-0000-4000-8000-000000000000',
          channel_config: { allowed_origins: ['https://a.example/path'] },
        },
        'channel_config.allowed_origins.0',
      ],
      [
        {
          agent_id: '00000000-0000-4000-8000-000000000000',
          channel_config: { widget: { accent_color: 'red;}body{' } },
        },
        'channel_config.widget.accent_color',
      ],
      [
        {
          agent_id: '00000000-0000-4000-8000-000000000000',
          channel_config: { widget: { languages: ['en-US', 'en_GB'] } },
        },
        'channel_config.widget.languages.1',
      ],
      [
        {
          agent_id: '00000000-0000-4000-8000-000000000000',
          channel_config: { widget: { languages: ['de-DE', 'de-de'] } },
        },
        'channel_config.widget.languages',
      ],
      [
        {
          agent_id: '00000000-0000-4000-8000-000000000000',
          channel_config: {
            widget: {
              languages: Array.from(
                { length: 21 },
                (_, i) => `en-${String.fromCharCode(65 + i)}${String.fromCharCode(65 + i)}`,
              ),
            },
          },
        },
        'channel_config.widget.languages',
      ],
      [
        { agent_id: '00000000-0000-4000-8000-000000000000', engagement_rules: { max_pending_turns: 0 } },
        'engagement_rules.max_pending_turns',
      ],
      [
        { agent_id: '00000000-0000-4000-8000-000000000000', runtime_config: { hook_timeout_ms: 100 } },
        'runtime_config.hook_timeout_ms',
      ],
      [
        { agent_id: '00000000-0000-4000-8000-000000000000', runtime_config: { reply_timeout_s: 3601 } },
        'runtime_config.reply_timeout_s',
      ],
      [{ agent_id: '00000000-0000-4000-8000-000000000000', status: 'active' }, 'body'],
    ])('refuses create %# with 400 invalid_request on %s', async (body, path) => {
      const res = await create(body);
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    });

    it("keeps the widget's languages in their canonical case", async () => {
      const res = await create({
        agent_id: published,
        channel_config: { widget: { languages: ['en-us', 'zh-hans', 'he'] } },
      });
      expect(res.status).toBe(201);
      expect(res.body.data.channel_config.widget.languages).toEqual(['en-US', 'zh-Hans', 'he']);
    });

    it('answers 404 for an unknown agent', async () => {
      expectError(await create({ agent_id: '00000000-0000-4000-8000-000000000000' }), 404, 'not_found');
    });
  });

  describe('activation rules', () => {
    it('refuses activation without a published agent or a hook_url, naming what is missing', async () => {
      const bare = (await create({ agent_id: draft })).body.data;
      const res = await api.post(`/api/v1/deployments/${bare.id}/activate`);
      expectError(res, 409, 'invalid_state');
      expect(res.body.error.message).toContain('published agent');
      expect(res.body.error.message).toContain('hook_url');

      const noHook = (await create({ agent_id: published })).body.data;
      const res2 = await api.post(`/api/v1/deployments/${noHook.id}/activate`);
      expectError(res2, 409, 'invalid_state');
      expect(res2.body.error.message).toContain('hook_url');
      expect(res2.body.error.message).not.toContain('published agent');

      const noAgent = (await create({ agent_id: draft, channel_config: hook })).body.data;
      const res3 = await api.post(`/api/v1/deployments/${noAgent.id}/activate`);
      expectError(res3, 409, 'invalid_state');
      expect(res3.body.error.message).toContain("published agent (the agent is 'draft')");
    });

    it('activates, is idempotent, refuses delete while active, deactivates, then deletes', async () => {
      const d = (await create({ agent_id: published, channel_config: hook })).body.data;
      const on = await api.post(`/api/v1/deployments/${d.id}/activate`);
      expect(on.status).toBe(200);
      expect(on.body.data.status).toBe('active');
      expect(on.body.data.deployed_at).toMatch(/Z$/);
      const again = await api.post(`/api/v1/deployments/${d.id}/activate`);
      expect(again.status).toBe(200);
      expect(again.body.data).toEqual(on.body.data);

      expectError(await api.del(`/api/v1/deployments/${d.id}`), 409, 'invalid_state');
      expectError(await api.del(`/api/v1/agents/${published}`), 409, 'invalid_state');
      expectError(await api.put(`/api/v1/deployments/${d.id}`, { channel_config: {} }), 409, 'invalid_state');

      // A bare POST deactivates nothing: the action takes `{}`.
      expectError(await api.post(`/api/v1/deployments/${d.id}/deactivate`), 400, 'invalid_request');
      expect((await api.get(`/api/v1/deployments/${d.id}`)).body.data.status).toBe('active');
      const off = await api.post(`/api/v1/deployments/${d.id}/deactivate`, {});
      expect(off.status).toBe(200);
      expect(off.body.data.status).toBe('inactive');
      expect((await api.post(`/api/v1/deployments/${d.id}/deactivate`, {})).body.data.status).toBe('inactive');

      const gone = await api.del(`/api/v1/deployments/${d.id}`);
      expect(gone.body).toEqual({ success: true, data: { id: d.id, deleted: true }, meta: {} });
      expectError(await api.get(`/api/v1/deployments/${d.id}`), 404, 'not_found');
    });

    it('deleting an agent removes its inactive deployments', async () => {
      const agent = await createPublishedAgent(api, 'Short-lived');
      const d = (await create({ agent_id: agent, channel_config: hook })).body.data;
      expect((await api.del(`/api/v1/agents/${agent}`)).status).toBe(200);
      expectError(await api.get(`/api/v1/deployments/${d.id}`), 404, 'not_found');
    });
  });

  describe('update', () => {
    it('replaces the given objects and refuses agent_id and unknown fields', async () => {
      const d = (await create({ agent_id: published, channel_config: { ...hook, widget: { title: 'Old' } } })).body
        .data;
      const res = await api.put(`/api/v1/deployments/${d.id}`, {
        environment: 'development',
        channel_config: { hook_url: 'http://127.0.0.1:9/h' },
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        environment: 'development',
        channel_config: { hook_url: 'http://127.0.0.1:9/h' },
      });
      expect(res.body.data.channel_config.widget).toBeUndefined();
      expect((await api.get(`/api/v1/deployments/${d.id}`)).body.data).toEqual(res.body.data);

      expectError(await api.put(`/api/v1/deployments/${d.id}`, { agent_id: draft }), 400, 'invalid_request');
      expectError(await api.put(`/api/v1/deployments/${d.id}`, {}), 400, 'invalid_request');
      expectError(await api.put(`/api/v1/deployments/${d.id}`, { call_direction: 'both' }), 400, 'invalid_request');
    });
  });

  describe('list', () => {
    it('pages and filters by agent_id, status and environment', async () => {
      const own = client(service.url, (await service.newCustomer('Filters')).apiKey);
      const a = await createPublishedAgent(own, 'A');
      const b = await createReadyAgent(own, 'B');
      const d1 = (await own.post('/api/v1/deployments', { agent_id: a, environment: 'staging', channel_config: hook }))
        .body.data;
      const d2 = (await own.post('/api/v1/deployments', { agent_id: a })).body.data;
      const d3 = (await own.post('/api/v1/deployments', { agent_id: b, environment: 'development' })).body.data;
      await own.post(`/api/v1/deployments/${d1.id}/activate`);

      const all = await own.get('/api/v1/deployments');
      expect(all.body.meta).toEqual({ page: 1, per_page: 20, total_count: 3, total_pages: 1 });
      expect(all.body.data.map((d: { id: string }) => d.id)).toEqual([d3.id, d2.id, d1.id]);
      const ids = async (qs: string) =>
        (await own.get(`/api/v1/deployments?${qs}`)).body.data.map((d: { id: string }) => d.id);
      expect(await ids(`agent_id=${a}`)).toEqual([d2.id, d1.id]);
      expect(await ids('status=active')).toEqual([d1.id]);
      expect(await ids('environment=development')).toEqual([d3.id]);
      expect(await ids(`agent_id=${a}&status=inactive`)).toEqual([d2.id]);
      const page2 = await own.get('/api/v1/deployments?per_page=2&page=2');
      expect(page2.body.meta).toEqual({ page: 2, per_page: 2, total_count: 3, total_pages: 2 });
      expect(page2.body.data.map((d: { id: string }) => d.id)).toEqual([d1.id]);

      for (const qs of ['status=paused', 'environment=qa', 'agent_id=nope', 'per_page=0', 'page=x']) {
        expectError(await own.get(`/api/v1/deployments?${qs}`), 400, 'invalid_request');
      }
    });
  });

  describe('rotate-secret', () => {
    it('issues a new secret with a default grace of one hour, or none with 0', async () => {
      const d = (await create({ agent_id: published })).body.data;
      const before = Date.now();
      expectError(await api.post(`/api/v1/deployments/${d.id}/rotate-secret`), 400, 'invalid_request');
      const res = await api.post(`/api/v1/deployments/${d.id}/rotate-secret`, {});
      expect(res.status).toBe(200);
      expect(res.body.data.signing_secret).toMatch(SECRET);
      expect(res.body.data.signing_secret).not.toBe(d.signing_secret);
      const expires = Date.parse(res.body.data.previous_secret_expires_at);
      expect(expires - before).toBeGreaterThanOrEqual(3600_000 - 1000);
      expect(expires - before).toBeLessThanOrEqual(3600_000 + 5000);

      const none = await api.post(`/api/v1/deployments/${d.id}/rotate-secret`, { grace_period_s: 0 });
      expect(none.body.data.previous_secret_expires_at).toBeNull();

      for (const body of [{ grace_period_s: -1 }, { grace_period_s: 604_801 }, { grace_period_s: 1.5 }, { grace: 1 }]) {
        expectError(await api.post(`/api/v1/deployments/${d.id}/rotate-secret`, body), 400, 'invalid_request');
      }
    });
  });

  it('answers 404 for unknown and malformed ids on every deployment route', async () => {
    for (const bad of ['00000000-0000-4000-8000-000000000000', 'nope']) {
      expectError(await api.get(`/api/v1/deployments/${bad}`), 404, 'not_found');
      expectError(await api.put(`/api/v1/deployments/${bad}`, { environment: 'staging' }), 404, 'not_found');
      expectError(await api.del(`/api/v1/deployments/${bad}`), 404, 'not_found');
      for (const action of ['activate', 'deactivate', 'rotate-secret']) {
        expectError(await api.post(`/api/v1/deployments/${bad}/${action}`, {}), 404, 'not_found');
      }
    }
  });
});
