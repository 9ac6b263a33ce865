import { createCustomer } from '../server/src/customers/customer.service.js';
import { openStore } from '../server/src/store/db.js';

/** Fills a fresh SQLite store with one customer and `count` draft agents; returns its key. */
export async function seedAgents(dataDir: string, count: number): Promise<string> {
  const store = await openStore({ dataDir });
  const { customerId, apiKey } = await createCustomer(store.db, 'Bench hotel');
  const spec = JSON.stringify({ greeting: 'Hello, how can I help?', language: 'en-US', voice: { rate: 1, pitch: 1 } });
  const start = Date.now() - count;
  for (let offset = 0; offset < count; offset += 500) {
    const rows = Array.from({ length: Math.min(500, count - offset) }, (_, i) => {
      const at = new Date(start + offset + i).toISOString();
      const name = `Agent ${offset + i}`;
      return {
        id: crypto.randomUUID(),
        customer_id: customerId,
        name,
        description: 'Answers guests of the Harbour Hotel',
        status: 'draft' as const,
        version: 0,
        agent_spec: null,
        draft_spec: spec,
        generated_spec: spec,
        test_mode_enabled: 0,
        project_id: null,
        knowledge_base_id: null,
        search_text: `${name}\nanswers guests of the harbour hotel`.toLowerCase(),
        created_at: at,
        updated_at: at,
      };
    });
    await store.db.insertInto('agents').values(rows).execute();
  }
  await store.close();
  return apiKey;
}
