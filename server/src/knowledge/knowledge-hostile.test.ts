import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { deflateSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  client,
  type Client,
  describeEachStore,
  expectError,
  HEALTHY_LOOP_MS,
  healthWhile,
  startService,
  type StoreKind,
  type TestService,
  uploadDocument,
} from '../../test/harness.js';
import { pdfOf } from '../../test/pdf-file.js';
import { HEADING_PATH_CHARS } from './chunker.js';

/** A one-page PDF whose content stream is `decoded` bytes of blanks, Flate-compressed to a few hundred KB. */
function pdfBomb(decoded: number): Buffer {
  const stream = deflateSync(Buffer.alloc(decoded, 0x20), { level: 9 });
  const head = [
    '%PDF-1.4',
    '1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj',
    '2 0 obj << /Type /Pages /Kids [3 0 R] /Count 1 >> endobj',
    '3 0 obj << /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >> endobj',
    `4 0 obj << /Length ${stream.length} /Filter /FlateDecode >>`,
    'stream\n',
  ].join('\n');
  return Buffer.concat([
    Buffer.from(head, 'latin1'),
    stream,
    Buffer.from('\nendstream\nendobj\ntrailer << /Root 1 0 R >>\n%%EOF\n', 'latin1'),
  ]);
}

describeEachStore('documents that would stall the node or fill the store', (kind: StoreKind) => {
  let service: TestService;
  let api: Client;
  let key: string;
  let site: Server;
  let siteUrl: string;
  /** Requests the site holds open at once, most of them, and every path it was asked. */
  const load = { now: 0, most: 0, paths: [] as string[] };
  /**
   * One customer's pages (`/mine-…`) are answered only once another's (`/theirs`) was asked: the order the
   * fetches show then depends on the service's fairness, not on how fast this machine makes a customer (a
   * service that made theirs wait behind mine would hold both, and the test fails on its time limit).
   */
  let theirsAsked = () => {};
  let theirsArrived = Promise.resolve();

  beforeAll(async () => {
    site = createServer((req, res) => {
      load.paths.push(req.url!);
      load.most = Math.max(load.most, ++load.now);
      if (req.url === '/theirs') theirsAsked();
      const held = req.url!.startsWith('/mine-') ? theirsArrived : Promise.resolve();
      void held.then(() =>
        setTimeout(() => {
          load.now--;
          if (req.url === '/heading.md')
            res.writeHead(200, { 'content-type': 'text/markdown' }).end(`# a${' '.repeat(200_000)}b\n\nThe garage.`);
          else res.writeHead(200, { 'content-type': 'text/plain' }).end(`The page ${req.url} says hello.`);
        }, 300),
      );
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    service = await startService(kind, {
      env: { DOCUMENT_READ_TIMEOUT_MS: '1000', KNOWLEDGE_CHARS_PER_CUSTOMER: '3000000' },
    });
    key = (await service.newCustomer('Hotel')).apiKey;
    api = client(service.url, key);
  });
  afterAll(async () => {
    await service?.close();
    await new Promise((resolve) => site?.close(resolve));
  });

  const newBase = async (as = api) =>
    (await as.post('/api/v1/knowledge-bases', { name: 'Guide' })).body.data.id as string;
  const upload = (base: string, name: string, bytes: Buffer, type: string) =>
    uploadDocument({ url: service.url, key, baseId: base }, { name, bytes, type });

  it('reads a Markdown heading of a hundred thousand blanks in one pass, uploaded or fetched, while the node answers', async () => {
    const base = await newBase();
    const text = `# a${' '.repeat(100_000)}b\n\nBreakfast is from 7.\n\n## ${'x {#'.repeat(20_000)}y\n\nThe pool.`;
    const { result: added, worstMs } = await healthWhile(
      service.url,
      api.post(`/api/v1/knowledge-bases/${base}/documents`, { title: 'Guide', format: 'markdown', text }),
    );
    expect(added.status).toBe(201);
    expect(worstMs).toBeLessThan(HEALTHY_LOOP_MS);
    const chunks = (await api.get(`/api/v1/knowledge-bases/${base}/documents/${added.body.data.id}/chunks`)).body.data;
    expect(chunks[0]).toMatchObject({ heading: 'a b', text: 'Breakfast is from 7.' });

    const fetched = await healthWhile(
      service.url,
      api.post(`/api/v1/knowledge-bases/${base}/documents`, { url: `${siteUrl}/heading.md` }),
    );
    expect(fetched.result.status).toBe(201);
    expect(fetched.worstMs).toBeLessThan(HEALTHY_LOOP_MS);
  });

  it('refuses a PDF whose one stream unpacks to 100 MB, before reading it, while the node answers', async () => {
    const bomb = pdfBomb(100 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const base = await newBase();
    const { result, worstMs } = await healthWhile(service.url, upload(base, 'brochure.pdf', bomb, 'application/pdf'));
    expect(result.status).toBe(400);
    expect(result.body.error).toEqual({
      code: 'invalid_request',
      message: 'The PDF is too large to read',
      details: [{ path: 'file', message: 'its compressed contents unpack to more than 64 MB' }],
    });
    expect(worstMs).toBeLessThan(HEALTHY_LOOP_MS);
  });

  it('cuts off a document that takes longer than DOCUMENT_READ_TIMEOUT_MS to read, saying so, and reads the next', async () => {
    // A service of its own with a short deadline: a thread's start is not counted, a 1,500-page PDF's reading (about 2 s) is.
    const strict = await startService(kind, { env: { DOCUMENT_READ_TIMEOUT_MS: '500' } });
    try {
      const own = await strict.newCustomer('Strict');
      const created = await client(strict.url, own.apiKey).post('/api/v1/knowledge-bases', { name: 'Guide' });
      const base = { url: strict.url, key: own.apiKey, baseId: created.body.data.id as string };
      const pages = Array.from({ length: 1_500 }, (_, p) =>
        Array.from({ length: 20 }, (_, i) => `Page ${p} line ${i} about the harbour and its boats.`),
      );
      const { result, worstMs } = await healthWhile(
        strict.url,
        uploadDocument(base, { name: 'manual.pdf', bytes: pdfOf(pages), type: 'application/pdf' }),
      );
      expect(result.status).toBe(400);
      expect(result.body.error).toEqual({
        code: 'invalid_request',
        message: 'The document could not be read',
        details: [{ path: 'document', message: 'reading it took longer than 0.5 s' }],
      });
      expect(worstMs).toBeLessThan(HEALTHY_LOOP_MS);
      // A new thread reads the next document.
      const menu = '# Breakfast\n\nFrom 7 to 10.';
      expect((await uploadDocument(base, { name: 'menu.md', bytes: menu, type: 'text/markdown' })).status).toBe(201);
    } finally {
      await strict.close();
    }
  });

  it('keeps headings short in every passage: a 310 KB document with a 100,000-character heading stores a few KB of headings', async () => {
    const base = await newBase();
    const heading = 'harbour '.repeat(12_500);
    const body = Array.from(
      { length: 250 },
      (_, i) => `Paragraph ${i} about the marina and its moorings, long enough to fill.`,
    );
    const added = await api.post(`/api/v1/knowledge-bases/${base}/documents`, {
      title: 'Guide',
      format: 'html',
      text: `<h1 id="${'i'.repeat(5_000)}">${heading}</h1>${body.map((p) => `<p>${p}</p>`).join('')}`,
    });
    expect(added.status).toBe(201);
    const chunks = (await api.get(`/api/v1/knowledge-bases/${base}/documents/${added.body.data.id}/chunks`)).body
      .data as { heading: string; url: string | null }[];
    expect(chunks.length).toBeGreaterThan(10);
    for (const chunk of chunks) expect(chunk.heading.length).toBeLessThanOrEqual(HEADING_PATH_CHARS);
    expect(chunks.reduce((sum, c) => sum + c.heading.length, 0)).toBeLessThan(chunks.length * 130);
  });

  it('holds a customer to their quota of knowledge with a plain 409, counting a changed document once, and leaves others alone', async () => {
    const base = await newBase();
    const words = (n: number) => 'word '.repeat(n / 5);
    // The service was started with 3,000,000 characters per customer; the tests above keep a few hundred thousand.
    const big = await api.post(`/api/v1/knowledge-bases/${base}/documents`, {
      title: 'Big',
      format: 'text',
      text: words(900_000),
    });
    expect(big.status).toBe(201);
    const second = await api.post(`/api/v1/knowledge-bases/${base}/documents`, {
      title: 'Second',
      format: 'text',
      text: words(900_000),
    });
    expect(second.status).toBe(201);
    const over = await api.post(`/api/v1/knowledge-bases/${base}/documents`, {
      title: 'Over',
      format: 'text',
      text: words(990_000),
    });
    expectError(over, 409, 'quota_exceeded');
    expect(over.body.error.message).toMatch(
      /^Your knowledge bases would hold [\d,]+ characters; at most 3,000,000: delete documents first$/,
    );
    expect((await api.get(`/api/v1/knowledge-bases/${base}/documents`)).body.data.map((d: any) => d.title)).toEqual([
      'Second',
      'Big',
    ]);
    // A change replaces its own characters: the same size again fits.
    const changed = await api.put(`/api/v1/knowledge-bases/${base}/documents/${big.body.data.id}`, {
      text: words(900_000),
    });
    expect(changed.status).toBe(200);
    const other = client(service.url, (await service.newCustomer('Other')).apiKey);
    const theirs = await other.post(`/api/v1/knowledge-bases/${await newBase(other)}/documents`, {
      title: 'Theirs',
      format: 'text',
      text: words(900_000),
    });
    expect(theirs.status).toBe(201);
  });

  it("fetches at most two of a customer's pages at once, and another customer's page meanwhile", async () => {
    const base = await newBase();
    load.most = 0;
    load.paths.length = 0;
    theirsArrived = new Promise<void>((resolve) => (theirsAsked = resolve));
    const mine = Array.from({ length: 5 }, (_, i) =>
      api.post(`/api/v1/knowledge-bases/${base}/documents`, { url: `${siteUrl}/mine-${i}` }),
    );
    await new Promise((r) => setTimeout(r, 100));
    const other = client(service.url, (await service.newCustomer('Neighbour')).apiKey);
    const theirs = await other.post(`/api/v1/knowledge-bases/${await newBase(other)}/documents`, {
      url: `${siteUrl}/theirs`,
    });
    expect(theirs.status).toBe(201);
    // Theirs did not wait for the five: it was fetched while two of mine were, and no more of them.
    expect(load.paths.indexOf('/theirs')).toBe(2);
    expect((await Promise.all(mine)).map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
    expect(load.most).toBe(3);
  });

  it('answers questions made to stall the search (a word of 480 letters, 32 long words) within a second, and still finds the passage', async () => {
    const base = await newBase();
    const guide = Array.from(
      { length: 300 },
      (_, i) => `# Room ${i}\n\nBreakfast is served from 7 to 10 in the garden room ${i}; parking costs 18 euros.`,
    ).join('\n\n');
    expect(
      (await api.post(`/api/v1/knowledge-bases/${base}/documents`, { title: 'Guide', text: guide, format: 'markdown' }))
        .status,
    ).toBe(201);
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const longWord = (i: number) => Array.from({ length: 14 }, (_, k) => letters[(i * 7 + k * 3) % 26]).join('');
    for (const q of [
      `breakfast ${'x'.repeat(480)}`,
      `breakfast ${Array.from({ length: 31 }, (_, i) => longWord(i)).join(' ')}`,
    ]) {
      const started = performance.now();
      const found = await api.get(`/api/v1/knowledge-bases/${base}/search?q=${encodeURIComponent(q.slice(0, 500))}`);
      const tookMs = performance.now() - started;
      expect(found.status).toBe(200);
      expect(found.body.data[0].text).toMatch(/^Breakfast is served/);
      // Each word may be split in two ("wifi" as "wi fi"): a word of hundreds of letters must not make hundreds of queries.
      expect(tookMs).toBeLessThan(1_000);
    }
  });
});
