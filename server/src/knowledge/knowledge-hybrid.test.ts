import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  client,
  type Client,
  describeEachStore,
  startService,
  type StoreKind,
  type TestService,
  waitFor,
} from '../../test/harness.js';
import { startEmbeddingsServer } from '../../test/embeddings-server.js';

const GUIDE = [
  '# Parking',
  '',
  'The garage under the hotel has forty spaces; a night costs 18 euros.',
  '',
  '# Breakfast',
  '',
  'The buffet opens at 7 in the garden room.',
  '',
  '# Pets',
  '',
  'Dogs are welcome in the garden rooms.',
].join('\n');

describeEachStore('knowledge search by meaning as well as words (EMBEDDINGS_URL)', (kind: StoreKind) => {
  let service: TestService;
  let api: Client;
  let embeddings: Awaited<ReturnType<typeof startEmbeddingsServer>>;

  beforeAll(async () => {
    embeddings = await startEmbeddingsServer();
    service = await startService(kind, {
      knowledgeRefreshMs: 100,
      env: { EMBEDDINGS_URL: embeddings.baseUrl, EMBEDDINGS_MODEL: 'test-embed', EMBEDDINGS_KEY: 'sk-embed-1234' },
    });
    api = client(service.url, (await service.newCustomer('Hotel')).apiKey);
  });
  afterAll(async () => {
    await service?.close();
    await embeddings?.close();
  });

  const withGuide = async () => {
    const base = (await api.post('/api/v1/knowledge-bases', { name: 'Guide' })).body.data.id as string;
    const doc = await api.post(`/api/v1/knowledge-bases/${base}/documents`, {
      title: 'Guest guide',
      format: 'markdown',
      text: GUIDE,
    });
    expect(doc.status).toBe(201);
    return base;
  };
  const search = (base: string, q: string) =>
    api.get(`/api/v1/knowledge-bases/${base}/search?q=${encodeURIComponent(q)}`);

  it("finds a passage by meaning when no word is shared, fusing both ranks, and stores each passage's vector", async () => {
    embeddings.down = false;
    const base = await withGuide();
    const stored = embeddings.calls.at(-1)!;
    expect(stored.authorization).toBe('Bearer sk-embed-1234');
    expect(stored.body.model).toBe('test-embed');
    expect(stored.body.input).toEqual([
      'Guest guide\nParking\nThe garage under the hotel has forty spaces; a night costs 18 euros.',
      'Guest guide\nBreakfast\nThe buffet opens at 7 in the garden room.',
      'Guest guide\nPets\nDogs are welcome in the garden rooms.',
    ]);

    // No passage holds "vehicle" or "leave": words alone find nothing; meaning finds the garage.
    const byMeaning = await search(base, 'Where do I leave my vehicle?');
    expect(byMeaning.body.meta.retrieval).toBe('hybrid');
    expect(byMeaning.body.data[0]).toMatchObject({ heading: 'Parking', matched: [] });
    expect(embeddings.calls.at(-1)!.body.input).toEqual(['Where do I leave my vehicle?']);
    // Both ranks agree on the puppy's passage: it comes first.
    const both = await search(base, 'Can my puppy stay in the garden rooms?');
    expect(both.body.data[0].heading).toBe('Pets');
    expect(both.body.data[0].score).toBeGreaterThan(both.body.data[1].score);
  });

  it('searches by words alone when the endpoint fails, saying why, and gives vectors to what was stored meanwhile once it is back', async () => {
    embeddings.down = true;
    const base = await withGuide();
    const byWords = await search(base, 'garage');
    expect(byWords.body.meta).toMatchObject({
      retrieval: 'full_text',
      embeddings_error: 'the embeddings endpoint answered 500',
    });
    expect(byWords.body.data[0].heading).toBe('Parking');
    expect((await search(base, 'Where do I leave my vehicle?')).body.data).toEqual([]);

    embeddings.down = false;
    // The refresh pass embeds the passages stored without a vector; then meaning finds them.
    await waitFor(
      async () => (await search(base, 'Where do I leave my vehicle?')).body.data[0]?.heading === 'Parking',
      5_000,
      'the passages embedded',
    );
  });
});
