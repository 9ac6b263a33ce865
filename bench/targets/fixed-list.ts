/** The same 20-item agent list for both baselines, shaped like the service's real response. */
export function fixedList(): object {
  const now = new Date().toISOString();
  const data = Array.from({ length: 20 }, (_, i) => ({
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    name: `Agent ${i}`,
    description: 'Answers guests of the Harbour Hotel',
    status: 'draft',
    version: 0,
    agent_spec: null,
    draft_spec: { greeting: `Hello, I'm Agent ${i}.`, language: 'en-US', voice: { rate: 1, pitch: 1 } },
    generated_spec: { greeting: `Hello, I'm Agent ${i}.`, language: 'en-US', voice: { rate: 1, pitch: 1 } },
    test_mode_enabled: false,
    created_at: now,
    updated_at: now,
    project_id: null,
    knowledge_base_id: null,
  }));
  return { success: true, data, meta: { page: 1, per_page: 20, total_count: 10_000, total_pages: 500 } };
}

export function printListening(port: number): void {
  process.stdout.write(`Listening on http://127.0.0.1:${port}\n`);
}
