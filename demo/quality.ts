import { api, expect2xx } from './management-api.js';

/** What the demo hotel asks of each ended conversation (README, Tests and analysis). */
export const DEMO_ANALYSIS = {
  summary: true,
  fields: [
    { name: 'party_size', type: 'number', description: 'How many people a table was asked for' },
    {
      name: 'topic',
      type: 'enum',
      values: ['dining', 'breakfast', 'rooms', 'spa', 'other'],
      description: 'What the guest asked about first',
    },
  ],
  criteria: [
    { id: 'booked_table', description: 'A table was held for the guest' },
    { id: 'asked_for_person', description: 'The guest asked for a person from the team' },
  ],
};

/** The demo hotel's tests: its hook's rules (demo/answers.ts) must keep doing these. */
export const DEMO_TESTS = [
  {
    name: 'Books a table',
    turns: [{ visitor: 'A table for dinner at 8 pm, please' }],
    expect: [
      { type: 'contains', text: 'held in your name' },
      { type: 'regex', text: 'table for two at 8', flags: 'i' },
    ],
  },
  {
    name: 'Asks for a person',
    turns: [{ visitor: 'Can I talk to a person?' }],
    expect: [{ type: 'handed_off' }],
  },
  {
    name: 'Breakfast hours',
    turns: [{ visitor: 'When is breakfast?' }],
    expect: [
      { type: 'contains', text: 'breakfast' },
      { type: 'not_contains', text: 'front desk will answer' },
    ],
  },
];

const ANALYST = { name: 'Demo stand-in analyst (keyword rules, not a model)', model: 'demo-analyst' };

/**
 * The demo hotel's tests, its analysis and the stand-in analyst that runs it without a model
 * (demo/stand-in-analyst.ts), at `analystUrl`: the endpoint re-pointed on every start (the demo's
 * port may change), created with the rest the first time. Returns the endpoint's id.
 */
export async function provisionQuality(
  serviceUrl: string,
  apiKey: string,
  agentId: string,
  analystUrl: string,
  endpointId: string | undefined,
): Promise<string> {
  if (endpointId) {
    const moved = await api(serviceUrl, apiKey, 'PUT', `/api/v1/model-endpoints/${endpointId}`, {
      base_url: analystUrl,
      api_key: null,
    });
    if (moved.status === 200) return endpointId;
  }
  const endpoint = await expect2xx(
    api(serviceUrl, apiKey, 'POST', '/api/v1/model-endpoints', { name: ANALYST.name, base_url: analystUrl }),
    'analyst endpoint',
  );
  const spec = await expect2xx(api(serviceUrl, apiKey, 'GET', `/api/v1/agents/${agentId}/spec`), 'agent spec');
  await expect2xx(
    api(serviceUrl, apiKey, 'PUT', `/api/v1/agents/${agentId}`, {
      draft_spec: {
        ...(spec.agent_spec ?? spec.draft_spec),
        analysis: DEMO_ANALYSIS,
        evaluation: { endpoint_id: endpoint.id, model: ANALYST.model },
      },
    }),
    'save analysis',
  );
  await expect2xx(api(serviceUrl, apiKey, 'POST', `/api/v1/agents/${agentId}/publish`), 'publish analysis');
  const tests = await expect2xx(api(serviceUrl, apiKey, 'GET', `/api/v1/agents/${agentId}/tests`), 'tests');
  if (!tests.length)
    for (const test of DEMO_TESTS)
      await expect2xx(api(serviceUrl, apiKey, 'POST', `/api/v1/agents/${agentId}/tests`, test), `test ${test.name}`);
  return endpoint.id;
}
