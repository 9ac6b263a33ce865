import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  client,
  type Client,
  describeEachStore,
  expectError,
  startService,
  type StoreKind,
  type TestService,
  uploadDocument,
  waitFor,
} from '../../test/harness.js';
import { pdfOf } from '../../test/pdf-file.js';

const PAGE = (spaHours: string) => `<!doctype html>
<html><head><title>Harbor Hotel — Guest guide</title><style>body { color: red }</style>
<script>var tracking = "breakfast tracking code";</script></head>
<body>
  <header><a href="/">Home</a> <a href="/rooms">Rooms</a></header>
  <nav><ul><li>Menu entry about parking deals</li></ul></nav>
  <main>
    <h1 id="guide">Guest guide</h1>
    <h2 id="breakfast">Breakfast</h2>
    <p>Breakfast is served from 7 to 10:30 in the <strong>garden room</strong>.</p>
    <h2 id="spa-and-pool">Spa &amp; pool</h2>
    <p>The sauna and the pool are open ${spaHours}.</p>
    <ul><li>Towels wait at the spa desk.</li><li>Children swim until 18.</li></ul>
  </main>
  <footer>© Harbor Hotel · Imprint · Cookie settings</footer>
</body></html>`;

const SIGN_IN = `<html><head><title>Sign in</title></head><body><form action="/login">
  <label>Email <input name="email"></label><label>Password <input type="password" name="pw"></label>
  <button>Sign in</button></form></body></html>`;

/** A customer's web site: pages whose answers each test sets, and every request it was sent. */
interface Site {
  url: string;
  requests: { path: string; headers: IncomingHttpHeaders }[];
  pages: Map<string, { status: number; type?: string; body?: string | Buffer; etag?: string; lastModified?: string }>;
  close(): Promise<void>;
}

async function startSite(): Promise<Site> {
  const requests: Site['requests'] = [];
  const pages: Site['pages'] = new Map();
  const server: Server = createServer((req, res) => {
    requests.push({ path: req.url!, headers: req.headers });
    const page = pages.get(req.url!) ?? { status: 404, type: 'text/plain', body: 'Not found' };
    if (page.etag && req.headers['if-none-match'] === page.etag) {
      res.writeHead(304, { etag: page.etag }).end();
      return;
    }
    if (page.lastModified && req.headers['if-modified-since'] === page.lastModified) {
      res.writeHead(304).end();
      return;
    }
    res.writeHead(page.status, {
      ...(page.type ? { 'content-type': page.type } : {}),
      ...(page.etag ? { etag: page.etag } : {}),
      ...(page.lastModified ? { 'last-modified': page.lastModified } : {}),
      ...(page.status === 301 ? { location: String(page.body) } : {}),
    });
    res.end(page.status === 301 ? '' : page.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    pages,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describeEachStore('documents from HTML, files and URLs', (kind: StoreKind) => {
  let service: TestService;
  let api: Client;
  let site: Site;
  let key: string;

  beforeAll(async () => {
    site = await startSite();
    service = await startService(kind, { knowledgeRefreshMs: 100 });
    key = (await service.newCustomer('Hotel')).apiKey;
    api = client(service.url, key);
  });
  afterAll(async () => {
    await service?.close();
    await site?.close();
  });

  const newBase = async () => (await api.post('/api/v1/knowledge-bases', { name: 'Site' })).body.data.id as string;
  const chunksOf = async (base: string, doc: string) =>
    (await api.get(`/api/v1/knowledge-bases/${base}/documents/${doc}/chunks`)).body.data as any[];
  const upload = (
    base: string,
    name: string,
    bytes: Buffer | string,
    type: string,
    fields: Record<string, string> = {},
  ) => uploadDocument({ url: service.url, key, baseId: base }, { name, bytes, type }, fields);

  it("reads an HTML page as its reader does: its sections with the page's own anchors, no scripts, menus or footer", async () => {
    const base = await newBase();
    const added = await api.post(`/api/v1/knowledge-bases/${base}/documents`, {
      title: 'Guest guide',
      format: 'html',
      text: PAGE('from 9 to 21'),
      url: 'https://harbor.example/guide',
    });
    expect(added.status).toBe(201);
    expect(added.body.data).toMatchObject({ format: 'html', source: 'text', chunk_count: 2, fetch_error: null });
    const chunks = await chunksOf(base, added.body.data.id);
    expect(chunks.map((c) => [c.heading, c.url, c.text])).toEqual([
      [
        'Guest guide › Breakfast',
        'https://harbor.example/guide#breakfast',
        'Breakfast is served from 7 to 10:30 in the garden room.',
      ],
      [
        'Guest guide › Spa & pool',
        'https://harbor.example/guide#spa-and-pool',
        'The sauna and the pool are open from 9 to 21.\n\nTowels wait at the spa desk.\n\nChildren swim until 18.',
      ],
    ]);
    const found = await api.get(
      `/api/v1/knowledge-bases/${base}/search?q=${encodeURIComponent('tracking cookie menu')}`,
    );
    expect(found.body.data).toEqual([]);

    const signIn = await api.post(`/api/v1/knowledge-bases/${base}/documents`, {
      title: 'Members',
      format: 'html',
      text: SIGN_IN,
    });
    expectError(signIn, 400, 'invalid_request');
    expect(signIn.body.error.message).toBe('The page is a sign-in form, not the page meant');
    expect(signIn.body.error.details[0].path).toBe('text');
  });

  it('takes .pdf, .html, .md and .txt files, and refuses a scan, a damaged file, another kind or more than 5 MB, plainly', async () => {
    const base = await newBase();
    const brochure = pdfOf([
      ['Harbor Hotel brochure', 'Late checkout until 14:00 costs 25 euros.'],
      [],
      ['Dogs are welcome in the garden rooms (a bowl waits there).'],
    ]);
    const pdf = await upload(base, 'brochure.pdf', brochure, 'application/pdf', {
      url: 'https://harbor.example/brochure.pdf',
    });
    expect(pdf.status).toBe(201);
    expect(pdf.body.data).toMatchObject({ title: 'brochure', format: 'pdf', source: 'file', chunk_count: 1 });
    const [chunk] = await chunksOf(base, pdf.body.data.id);
    expect(chunk.text).toBe(
      'Harbor Hotel brochure\nLate checkout until 14:00 costs 25 euros.\n\nDogs are welcome in the garden rooms (a bowl waits there).',
    );
    expect(chunk.url).toBe('https://harbor.example/brochure.pdf');
    const search = await api.get(`/api/v1/knowledge-bases/${base}/search?q=${encodeURIComponent('late checkout')}`);
    expect(search.body.data[0].document_id).toBe(pdf.body.data.id);

    const html = await upload(base, 'guide.html', PAGE('from 9 to 21'), 'text/html', { title: 'The guide' });
    expect(html.body.data).toMatchObject({ title: 'The guide', format: 'html', chunk_count: 2 });
    const md = await upload(base, 'faq.md', '# Wifi\n\nThe password is on your key card.', '');
    expect(md.body.data).toMatchObject({ title: 'faq', format: 'markdown', chunk_count: 1 });
    const txt = await upload(base, 'notes.txt', 'Quiet hours start at 22.', 'text/plain');
    expect(txt.body.data).toMatchObject({ format: 'text', chunk_count: 1 });

    const refused = async (answer: { status: number; body: any }, message: string) => {
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({ code: 'invalid_request', message });
      expect(answer.body.error.details[0].path).toBe('file');
    };
    await refused(
      await upload(base, 'scan.pdf', pdfOf([[], []]), 'application/pdf'),
      'The PDF holds no text to answer from',
    );
    await refused(
      await upload(base, 'broken.pdf', Buffer.from('%PDF-1.4 nothing else'), 'application/pdf'),
      'The file could not be read as a PDF',
    );
    await refused(
      await upload(base, 'menu.docx', Buffer.from('PK'), 'application/octet-stream'),
      'The file is not one a knowledge base reads',
    );
    await refused(
      await upload(base, 'latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'text/plain'),
      'The file is not UTF-8 text',
    );
    await refused(
      await upload(base, 'members.html', SIGN_IN, 'text/html'),
      'The page is a sign-in form, not the page meant',
    );
    const huge = await upload(base, 'huge.txt', 'x'.repeat(5 * 1024 * 1024 + 1), 'text/plain');
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe('payload_too_large');
    const noFile = new FormData();
    noFile.set('title', 'Nothing');
    const missing = await fetch(`${service.url}/api/v1/knowledge-bases/${base}/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: noFile,
    });
    expect(missing.status).toBe(400);
    expect(((await missing.json()) as any).error.details).toEqual([{ path: 'file', message: 'a file is required' }]);
    // Nothing refused was kept.
    expect((await api.get(`/api/v1/knowledge-bases/${base}/documents`)).body.meta.total_count).toBe(4);
  });

  it('fetches a page from its URL, refreshes it with ETag and Last-Modified, and keeps its passages when the page goes away', async () => {
    const base = await newBase();
    site.pages.set('/guide', {
      status: 200,
      type: 'text/html; charset=utf-8',
      body: PAGE('from 9 to 21'),
      etag: '"v1"',
    });
    site.pages.set('/old-guide', { status: 301, body: '/guide' });
    const added = await api.post(`/api/v1/knowledge-bases/${base}/documents`, {
      url: `${site.url}/old-guide`,
      refresh_hours: 24,
    });
    expect(added.status).toBe(201);
    const doc = added.body.data;
    expect(doc).toMatchObject({
      title: 'Harbor Hotel — Guest guide',
      source: 'url',
      format: 'html',
      url: `${site.url}/old-guide`,
      refresh_hours: 24,
      chunk_count: 2,
      fetch_error: null,
    });
    expect(doc.fetched_at).toEqual(expect.any(String));
    const first = await chunksOf(base, doc.id);
    expect(first[1].url).toBe(`${site.url}/old-guide#spa-and-pool`);
    expect(site.requests.at(-1)!.headers['user-agent']).toBe('concierge-knowledge/1');

    const refresh = () => api.post(`/api/v1/knowledge-bases/${base}/documents/${doc.id}/refresh`);
    const unchanged = await refresh();
    expect(unchanged.status).toBe(200);
    expect(site.requests.at(-1)!.headers['if-none-match']).toBe('"v1"');
    expect((await chunksOf(base, doc.id)).map((c) => c.id)).toEqual(first.map((c) => c.id));

    site.pages.set('/guide', {
      status: 200,
      type: 'text/html',
      body: PAGE('from 8 to 22'),
      lastModified: 'Fri, 27 Nov 2026 10:00:00 GMT',
    });
    const changed = await refresh();
    expect(changed.body.data).toMatchObject({ fetch_error: null, chunk_count: 2 });
    expect((await chunksOf(base, doc.id))[1].text).toContain('open from 8 to 22');
    await refresh();
    expect(site.requests.at(-1)!.headers['if-modified-since']).toBe('Fri, 27 Nov 2026 10:00:00 GMT');

    site.pages.set('/guide', { status: 404, type: 'text/plain', body: 'gone' });
    const gone = await refresh();
    expect(gone.status).toBe(200);
    expect(gone.body.data.fetch_error).toBe(`${site.url}/guide answered 404`);
    expect((await chunksOf(base, doc.id))[1].text).toContain('open from 8 to 22');
    expect((await api.get(`/api/v1/knowledge-bases/${base}/documents/${doc.id}`)).body.data.fetch_error).toBe(
      `${site.url}/guide answered 404`,
    );

    // A URL document's text is its page's.
    expectError(
      await api.put(`/api/v1/knowledge-bases/${base}/documents/${doc.id}`, { text: 'mine' }),
      409,
      'invalid_state',
    );
    const given = await api.post(`/api/v1/knowledge-bases/${base}/documents`, { title: 'T', text: 'Some text.' });
    expectError(
      await api.post(`/api/v1/knowledge-bases/${base}/documents/${given.body.data.id}/refresh`),
      409,
      'invalid_state',
    );
  });

  it('refuses a page it cannot have at once, saying why, and stores nothing', async () => {
    const base = await newBase();
    site.pages.set('/members', { status: 401, type: 'text/html', body: SIGN_IN });
    site.pages.set('/login-wall', { status: 200, type: 'text/html', body: SIGN_IN });
    site.pages.set('/logo.png', { status: 200, type: 'image/png', body: Buffer.from([137, 80, 78, 71]) });
    const refused = async (path: string, message: RegExp) => {
      const answer = await api.post(`/api/v1/knowledge-bases/${base}/documents`, { url: `${site.url}${path}` });
      expectError(answer, 400, 'invalid_request');
      expect(answer.body.error.details[0].path).toBe('url');
      expect(`${answer.body.error.message}: ${answer.body.error.details[0].message}`).toMatch(message);
    };
    await refused('/nowhere', /answered 404$/);
    await refused('/members', /asks for a sign-in \(401\)/);
    await refused('/login-wall', /sign-in form/);
    await refused('/logo.png', /is image\/png: not HTML, Markdown, text or PDF/);
    const outside = await client(service.url, key).post(`/api/v1/knowledge-bases/${base}/documents`, {
      url: 'http://10.1.2.3/intranet',
    });
    expect(outside.body.error.details[0].message).toMatch(/10\.1\.2\.3 is not a public address/);
    expect((await api.get(`/api/v1/knowledge-bases/${base}/documents`)).body.meta.total_count).toBe(0);
    expectError(await api.post(`/api/v1/knowledge-bases/${base}/documents`, { title: 'x' }), 400, 'invalid_request');
    expectError(
      await api.post(`/api/v1/knowledge-bases/${base}/documents`, { title: 'x', text: 'y', refresh_hours: 2 }),
      400,
      'invalid_request',
    );
  });

  it('fetches a page again on its own once its refresh_hours are up', async () => {
    const base = await newBase();
    site.pages.set('/hours', {
      status: 200,
      type: 'text/plain',
      body: 'Reception is open day and night.',
      etag: '"h1"',
    });
    const doc = (
      await api.post(`/api/v1/knowledge-bases/${base}/documents`, { url: `${site.url}/hours`, refresh_hours: 1 })
    ).body.data;
    const asked = () => site.requests.filter((r) => r.path === '/hours').length;
    expect(asked()).toBe(1);
    // An hour passes.
    await sql`UPDATE knowledge_documents SET next_fetch_at = '2000-01-01T00:00:00.000Z' WHERE id = ${doc.id}`.execute(
      service.app.store.db,
    );
    await waitFor(async () => asked() === 2, 5_000, 'the refresh');
    expect(site.requests.at(-1)!.headers['if-none-match']).toBe('"h1"');
    const after = await waitFor(async () => {
      const d = (await api.get(`/api/v1/knowledge-bases/${base}/documents/${doc.id}`)).body.data;
      return d.fetched_at !== doc.fetched_at && d;
    });
    expect(Date.parse(after.fetched_at)).toBeGreaterThan(Date.parse(doc.fetched_at));
    // Once, not every pass: the next is an hour away.
    await new Promise((r) => setTimeout(r, 400));
    expect(asked()).toBe(2);
  });
});
