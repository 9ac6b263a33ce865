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
  waitFor,
} from '../../test/harness.js';
import type { AgentGenerator } from './generation/agent-generator.js';

/** A generator the test releases by hand, to hold agents in `generating`. */
function heldGenerator() {
  const waiting: Array<() => void> = [];
  const generator: AgentGenerator = {
    async generate({ name }, { reportProgress }) {
      await reportProgress(10);
      await new Promise<void>((resolve) => waiting.push(resolve));
      return { greeting: `Hi from ${name}` };
    },
  };
  return { generator, releaseAll: () => waiting.splice(0).forEach((r) => r()) };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describeEachStore('agents', (kind) => {
  let service: TestService;
  let api: Client;

  beforeAll(async () => {
    service = await startService(kind);
    api = client(service.url, (await service.newCustomer()).apiKey);
  });
  afterAll(() => service.close());

  describe('create and generation', () => {
    it('answers 202 with a job and Location, then the job and the agent progress to draft', async () => {
      const res = await api.post('/api/v1/agents', {
        name: 'Front desk',
        description: 'Answers guests of the Harbour Hotel',
      });
      expect(res.status).toBe(202);
      expect(res.body.success).toBe(true);
      expect(res.body.meta).toEqual({});
      const { job_id, agent_id, status, polling_url } = res.body.data;
      expect(job_id).toMatch(UUID);
      expect(agent_id).toMatch(UUID);
      expect(status).toBe('queued');
      expect(polling_url).toBe(`/api/v1/jobs/${job_id}/status`);
      expect(res.headers.get('location')).toBe(polling_url);

      const job = await waitFor(async () => {
        const r = await api.get(polling_url);
        return r.body.data.status === 'succeeded' && r.body.data;
      });
      expect(job).toMatchObject({ job_id, agent_id, progress: 100, error: null });
      expect(job.created_at).toMatch(ISO_MS);

      const agent = (await api.get(`/api/v1/agents/${agent_id}`)).body.data;
      expect(agent).toMatchObject({
        id: agent_id,
        name: 'Front desk',
        status: 'draft',
        version: 0,
        agent_spec: null,
        test_mode_enabled: false,
      });
      expect(agent.generated_spec).toEqual(agent.draft_spec);
      expect(agent.draft_spec.greeting).toBe('Hello, this is the front desk. How can I help you today?');
      expect(agent.created_at).toMatch(ISO_MS);

      const latest = await api.get(`/api/v1/agents/${agent_id}/generation-status`);
      expect(latest.status).toBe(200);
      expect(latest.body.data).toEqual(job);
    });

    it.each([
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x'.repeat(201) }, 'name'],
      [{ name: 'ok', description: 'x'.repeat(4001) }, 'description'],
      [{ name: 'ok', colour: 'blue' }, 'body'],
      [{ name: 42 }, 'name'],
    ])('refuses %j with 400 invalid_request naming %s', async (body, path) => {
      const res = await api.post('/api/v1/agents', body);
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    });

    it('refuses a missing body and a JSON array', async () => {
      expectError(await api.post('/api/v1/agents'), 400, 'invalid_request');
      expectError(await api.post('/api/v1/agents', [1]), 400, 'invalid_request');
    });

    it('answers 404 for unknown and malformed job ids', async () => {
      expectError(await api.get('/api/v1/jobs/00000000-0000-4000-8000-000000000000/status'), 404, 'not_found');
      expectError(await api.get('/api/v1/jobs/nope/status'), 404, 'not_found');
    });
  });

  describe('get, update, spec, publish, delete', () => {
    let id: string;
    beforeAll(async () => {
      id = await createReadyAgent(api, 'Spa desk', 'Books treatments');
    });

    it('updates the given fields and replaces the draft whole', async () => {
      const res = await api.put(`/api/v1/agents/${id}`, {
        name: 'Spa & wellness',
        draft_spec: { greeting: 'Welcome to the spa', language: 'fr-FR' },
        test_mode_enabled: true,
        project_id: 'proj-1',
        knowledge_base_id: null,
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        id,
        name: 'Spa & wellness',
        description: 'Books treatments',
        draft_spec: { greeting: 'Welcome to the spa', language: 'fr-FR' },
        test_mode_enabled: true,
        project_id: 'proj-1',
        knowledge_base_id: null,
        status: 'draft',
      });
      expect((await api.get(`/api/v1/agents/${id}`)).body.data).toEqual(res.body.data);
    });

    it.each([
      [{}, 'body'],
      [{ status: 'published' }, 'body'],
      [{ draft_spec: 'text' }, 'draft_spec'],
      [{ draft_spec: [1, 2] }, 'draft_spec'],
      [{ draft_spec: { big: 'x'.repeat(64 * 1024) } }, 'draft_spec'],
      [{ test_mode_enabled: 'yes' }, 'test_mode_enabled'],
    ])('refuses update %# with 400 invalid_request on %s', async (body, path) => {
      const res = await api.put(`/api/v1/agents/${id}`, body);
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    });

    it('publishes the draft as version 1, does not bump for an unchanged draft, bumps after an edit', async () => {
      const first = await api.post(`/api/v1/agents/${id}/publish`);
      expect(first.status).toBe(200);
      expect(first.body.data).toMatchObject({
        status: 'published',
        version: 1,
        agent_spec: { greeting: 'Welcome to the spa', language: 'fr-FR' },
      });

      const again = await api.post(`/api/v1/agents/${id}/publish`);
      expect(again.body.data.version).toBe(1);

      const edited = await api.put(`/api/v1/agents/${id}`, { draft_spec: { greeting: 'Bonjour' } });
      expect(edited.body.data.status).toBe('published');
      expect(edited.body.data.agent_spec).toEqual({ greeting: 'Welcome to the spa', language: 'fr-FR' });

      const second = await api.post(`/api/v1/agents/${id}/publish`);
      expect(second.body.data).toMatchObject({ version: 2, agent_spec: { greeting: 'Bonjour' } });

      const spec = await api.get(`/api/v1/agents/${id}/spec`);
      expect(spec.status).toBe(200);
      expect(spec.body.data).toEqual({
        agent_id: id,
        version: 2,
        agent_spec: { greeting: 'Bonjour' },
        draft_spec: { greeting: 'Bonjour' },
        generated_spec: second.body.data.generated_spec,
      });
    });

    it('refuses a body on publish', async () => {
      expectError(await api.post(`/api/v1/agents/${id}/publish`, { force: true }), 400, 'invalid_request');
    });

    it('deletes, then everything about the agent is 404', async () => {
      const doomed = await createReadyAgent(api, 'Doomed');
      const res = await api.del(`/api/v1/agents/${doomed}`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ success: true, data: { id: doomed, deleted: true }, meta: {} });
      for (const path of ['', '/spec', '/generation-status'])
        expectError(await api.get(`/api/v1/agents/${doomed}${path}`), 404, 'not_found');
      expectError(await api.put(`/api/v1/agents/${doomed}`, { name: 'x' }), 404, 'not_found');
      expectError(await api.post(`/api/v1/agents/${doomed}/publish`), 404, 'not_found');
      expectError(await api.del(`/api/v1/agents/${doomed}`), 404, 'not_found');
    });

    it('answers 404 for unknown and malformed ids on every agent route', async () => {
      for (const bad of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', '%E0%A4%A']) {
        expectError(await api.get(`/api/v1/agents/${bad}`), 404, 'not_found');
        expectError(await api.get(`/api/v1/agents/${bad}/spec`), 404, 'not_found');
        expectError(await api.get(`/api/v1/agents/${bad}/generation-status`), 404, 'not_found');
        expectError(await api.put(`/api/v1/agents/${bad}`, { name: 'x' }), 404, 'not_found');
        expectError(await api.post(`/api/v1/agents/${bad}/publish`), 404, 'not_found');
        expectError(await api.del(`/api/v1/agents/${bad}`), 404, 'not_found');
      }
    });
  });

  describe('list: pagination and filters', () => {
    let fresh: Client;
    const names = ['Alpha Desk', 'beta desk', 'Gamma', 'Delta_Lounge', 'Épée 100%'];
    beforeAll(async () => {
      fresh = client(service.url, (await service.newCustomer('Lister')).apiKey);
      for (const name of names)
        await createReadyAgent(fresh, name, name === 'Gamma' ? 'Knows the DESK hours' : 'plain');
    });

    it('lists newest first with PageMeta and defaults', async () => {
      const res = await fresh.get('/api/v1/agents');
      expect(res.status).toBe(200);
      expect(res.body.meta).toEqual({ page: 1, per_page: 20, total_count: 5, total_pages: 1 });
      expect(res.body.data.map((a: { name: string }) => a.name)).toEqual([...names].reverse());
    });

    it('lists each agent exactly as GET shows it: specs, flags, nulls and odd text', async () => {
      // The list is serialised by the database; GET goes through JavaScript. They must agree.
      const shapes = client(service.url, (await service.newCustomer('Shapes')).apiKey);
      const plain = await createReadyAgent(shapes, 'Plain', 'line\nbreak "quoted" \u2603');
      const rich = await createPublishedAgent(shapes, 'Rich');
      const spec = { greeting: 'Hi "there" \\ \u00e9', nested: { list: [1, 2.5, null, true], empty: {} } };
      const updated = await shapes.put(`/api/v1/agents/${rich}`, {
        test_mode_enabled: true,
        project_id: 'proj-1',
        draft_spec: spec,
      });
      expect(updated.status).toBe(200);
      const listed = (await shapes.get('/api/v1/agents')).body.data;
      const single = await Promise.all(
        [rich, plain].map(async (id) => (await shapes.get(`/api/v1/agents/${id}`)).body.data),
      );
      expect(listed).toEqual(single);
      expect(listed[0]).toMatchObject({
        test_mode_enabled: true,
        project_id: 'proj-1',
        draft_spec: spec,
        status: 'published',
      });
      expect(listed[1]).toMatchObject({
        test_mode_enabled: false,
        agent_spec: null,
        knowledge_base_id: null,
        version: 0,
      });
    });

    it('pages with total_pages = ceil(total/per_page) and an empty page past the end', async () => {
      const p1 = await fresh.get('/api/v1/agents?per_page=2');
      const p3 = await fresh.get('/api/v1/agents?per_page=2&page=3');
      const p4 = await fresh.get('/api/v1/agents?per_page=2&page=4');
      expect(p1.body.meta).toEqual({ page: 1, per_page: 2, total_count: 5, total_pages: 3 });
      expect(p1.body.data).toHaveLength(2);
      expect(p3.body.data.map((a: { name: string }) => a.name)).toEqual(['Alpha Desk']);
      expect(p4.status).toBe(200);
      expect(p4.body).toMatchObject({ data: [], meta: { page: 4, per_page: 2, total_count: 5, total_pages: 3 } });
      const all = await fresh.get('/api/v1/agents?per_page=100');
      expect(all.body.meta.total_pages).toBe(1);
    });

    it.each([
      'per_page=0',
      'per_page=101',
      'per_page=abc',
      'per_page=1.5',
      'page=0',
      'page=-1',
      'page=abc',
      'page=1&page=2',
    ])('refuses %s with 400 invalid_request, never clamping', async (qs) => {
      const res = await fresh.get(`/api/v1/agents?${qs}`);
      expectError(res, 400, 'invalid_request');
      expect(res.body.error.details[0].path).toBe(qs.split('=')[0]);
    });

    it('reports total_pages 0 for an empty list', async () => {
      const empty = client(service.url, (await service.newCustomer('Empty')).apiKey);
      expect((await empty.get('/api/v1/agents')).body.meta).toEqual({
        page: 1,
        per_page: 20,
        total_count: 0,
        total_pages: 0,
      });
    });

    it('searches name and description case-insensitively, treating % and _ literally', async () => {
      const byName = (await fresh.get('/api/v1/agents?search=DESK')).body.data.map((a: { name: string }) => a.name);
      expect(byName.sort()).toEqual(['Alpha Desk', 'Gamma', 'beta desk']);
      expect((await fresh.get('/api/v1/agents?search=_')).body.data.map((a: { name: string }) => a.name)).toEqual([
        'Delta_Lounge',
      ]);
      expect((await fresh.get('/api/v1/agents?search=100%25')).body.data.map((a: { name: string }) => a.name)).toEqual([
        'Épée 100%',
      ]);
      expect((await fresh.get('/api/v1/agents?search=ÉPÉE')).body.meta.total_count).toBe(1);
      expect((await fresh.get('/api/v1/agents?search=nothing-like-this')).body.meta.total_count).toBe(0);
      expectError(await fresh.get(`/api/v1/agents?search=${'x'.repeat(201)}`), 400, 'invalid_request');
    });

    it('filters by status and refuses unknown statuses', async () => {
      const [first] = (await fresh.get('/api/v1/agents?per_page=1')).body.data;
      await fresh.post(`/api/v1/agents/${first.id}/publish`);
      const published = await fresh.get('/api/v1/agents?status=published');
      expect(published.body.data.map((a: { id: string }) => a.id)).toEqual([first.id]);
      expect((await fresh.get('/api/v1/agents?status=draft&search=desk')).body.meta.total_count).toBe(3);
      // Totals without search come from maintained counts: they must follow every change.
      const totals = async () =>
        Promise.all(
          ['', '?status=draft', '?status=published', '?status=generating'].map(
            async (qs) => (await fresh.get(`/api/v1/agents${qs}`)).body.meta.total_count,
          ),
        );
      expect(await totals()).toEqual([5, 4, 1, 0]);
      await fresh.del(`/api/v1/agents/${first.id}`);
      expect(await totals()).toEqual([4, 4, 0, 0]);
      expectError(await fresh.get('/api/v1/agents?status=archived'), 400, 'invalid_request');
    });
  });

  describe('state rules while generating', () => {
    it('refuses update and publish while generating, and allows them once generation finished', async () => {
      const held = heldGenerator();
      const slow = await service.restart({ generator: held.generator });
      try {
        const api2 = client(slow.url, (await slow.newCustomer('Slow')).apiKey);
        const created = (await api2.post('/api/v1/agents', { name: 'Held' })).body.data;
        await waitFor(async () => {
          const job = (await api2.get(created.polling_url)).body.data;
          return job.status === 'running' && job.progress === 10 && job;
        });
        expect((await api2.get(`/api/v1/agents/${created.agent_id}`)).body.data.status).toBe('generating');
        expectError(await api2.post(`/api/v1/agents/${created.agent_id}/publish`), 409, 'invalid_state');
        expectError(await api2.put(`/api/v1/agents/${created.agent_id}`, { name: 'x' }), 409, 'invalid_state');
        held.releaseAll();
        await waitFor(async () => (await api2.get(`/api/v1/agents/${created.agent_id}`)).body.data.status === 'draft');
        expect((await api2.post(`/api/v1/agents/${created.agent_id}/publish`)).status).toBe(200);
      } finally {
        held.releaseAll();
        service = await slow.restart({});
        api = client(service.url, (await service.newCustomer()).apiKey);
      }
    });

    it('marks job and agent failed when generation keeps failing, and refuses to publish a failed agent', async () => {
      const failing: AgentGenerator = {
        async generate() {
          throw new Error('model unavailable');
        },
      };
      const broken = await service.restart({ generator: failing });
      try {
        const api2 = client(broken.url, (await broken.newCustomer('Broken')).apiKey);
        const created = (await api2.post('/api/v1/agents', { name: 'Doomed' })).body.data;
        const job = await waitFor(async () => {
          const j = (await api2.get(created.polling_url)).body.data;
          return j.status === 'failed' && j;
        });
        expect(job.error).toBe('model unavailable');
        expect((await api2.get(`/api/v1/agents/${created.agent_id}`)).body.data.status).toBe('failed');
        expectError(await api2.post(`/api/v1/agents/${created.agent_id}/publish`), 409, 'invalid_state');
      } finally {
        service = await broken.restart({});
        api = client(service.url, (await service.newCustomer()).apiKey);
      }
    });
  });
});
