import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../server/src/store/db.js';
import { MEASURED_MEMORY_ARGS, SERVICE_ENTRY, startTarget, type Target } from './process.js';
import { seedAgents } from './seed.js';
import { printTable, quantile } from './stats.js';

const CONVERSATIONS = 10_000;
const WARM_UP = 200;
const REQUESTS = 1_000;
/** Searched for: a room number said in 20 of the 10,000 conversations (0.2%), as a customer looks up one guest's stay. */
const RARE = 'room 123:';
/** Said in every conversation: the worst case, where every match is counted. */
const COMMON = 'breakfast';

/** Adds `count` ended conversations to the store's one customer: two turns each (one answered at once, one deferred), their events and hook records. */
export async function seedConversations(dataDir: string, count: number): Promise<void> {
  const store = await openStore({ dataDir });
  const { db } = store;
  const customer = await db.selectFrom('customers').select('id').executeTakeFirstOrThrow();
  const agent = await db
    .selectFrom('agents')
    .select('id')
    .where('customer_id', '=', customer.id)
    .executeTakeFirstOrThrow();
  const now = new Date().toISOString();
  const deploymentId = crypto.randomUUID();
  await db
    .insertInto('deployments')
    .values({
      id: deploymentId,
      customer_id: customer.id,
      agent_id: agent.id,
      environment: 'production',
      status: 'inactive',
      transcript_hook_status: 'active',
      transcript_hook_disabled_at: null,
      transcript_hook_disabled_reason: null,
      call_direction: 'inbound',
      agent_version: null,
      channel_config: '{"hook_url":"https://hotel.example/hook"}',
      engagement_rules: '{}',
      runtime_config: '{}',
      signing_secret: 'whsec_bench',
      previous_secret: null,
      previous_secret_expires_at: null,
      deployed_at: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  const start = Date.now() - count * 1000;
  for (let offset = 0; offset < count; offset += 250) {
    await db.transaction().execute(async (trx) => {
      for (let i = offset; i < Math.min(offset + 250, count); i++) {
        const at = (ms: number) => new Date(start + i * 1000 + ms).toISOString();
        const id = crypto.randomUUID();
        await trx
          .insertInto('conversations')
          .values({
            id,
            customer_id: customer.id,
            deployment_id: deploymentId,
            agent_id: agent.id,
            user_sub: `guest-${i}`,
            user_name: `Guest ${i}`,
            user_ctx: null,
            status: 'ended',
            end_reason: 'user_ended',
            ended_at: at(900),
            agent_version: 1,
            last_seq: 7,
            turn_count: 2,
            handler: 'agent',
            handler_name: null,
            needs_person: 0,
            handoff_reason: null,
            handoff_at: null,
            preview: 0 as const,
            wait_told_at: null,
            created_at: at(0),
            updated_at: at(900),
          })
          .execute();
        const turns = [
          {
            text: `Hello, I am in room ${i % 500}: is breakfast included tomorrow?`,
            reply: 'Yes, breakfast is served from 7 to 10 in the Harbour Room.',
          },
          {
            text: `Could you book a taxi to the station for ${(i % 12) + 1} pm?`,
            reply: 'Done: a taxi will wait at the main entrance.',
          },
        ].map((t, n) => ({
          id: crypto.randomUUID(),
          conversation_id: id,
          client_turn_id: `c${n}`,
          text: t.text,
          mode: 'text' as const,
          status: 'resolved' as const,
          delivery_id: crypto.randomUUID(),
          reply_text: t.reply,
          failure_reason: null,
          expires_at: null,
          acknowledged_at: at(100 + n * 300),
          resolved_at: at(200 + n * 300),
          reply_received_at: n ? at(200 + n * 300) : null,
          reply_duplicates: 0,
          first_part_at: null,
          part_chars: 0,
          reply_actions: null,
          replied_by: null,
          answering: 0,
          created_at: at(50 + n * 300),
          updated_at: at(200 + n * 300),
        }));
        await trx.insertInto('turns').values(turns).execute();
        const frames = turns.flatMap((t) => [
          { type: 'turn_accepted', turn_id: t.id, client_turn_id: t.client_turn_id, text: t.text, mode: 'text' },
          { type: 'turn_acknowledged', turn_id: t.id },
          { type: 'reply', turn_id: t.id, text: t.reply_text, actions: [] },
        ]);
        frames.push({ type: 'conversation_ended', reason: 'user_ended' } as never);
        await trx
          .insertInto('conversation_events')
          .values(
            frames.map(({ type, ...rest }, n) => ({
              conversation_id: id,
              seq: n + 1,
              type: type as 'reply',
              frame: JSON.stringify({ type, seq: n + 1, ...rest }),
              created_at: at(n * 100),
            })),
          )
          .execute();
        await trx
          .insertInto('deliveries')
          .values(
            turns.map((t) => ({
              id: crypto.randomUUID(),
              customer_id: customer.id,
              deployment_id: deploymentId,
              conversation_id: id,
              turn_id: t.id,
              event_id: null,
              kind: 'turn_hook' as const,
              event_type: 'turn.created',
              url: 'https://hotel.example/hook',
              attempt: 1,
              sent_at: t.created_at,
              duration_ms: 41,
              request: JSON.stringify({
                headers: { 'content-type': 'application/json', 'x-service-signature': `sha256=${'a'.repeat(64)}` },
                body: JSON.stringify({ type: 'turn.created', turn_id: t.id, text: t.text }),
              }),
              response: JSON.stringify({ status: 202, headers: { 'content-length': '0' }, body: '', truncated: false }),
              error: null,
              outcome: 'succeeded' as const,
              manual: 0 as const,
            })),
          )
          .execute();
      }
    });
  }
  await store.close();
}

/** Sequential GETs (one at a time, so each figure is a request's own time, not a queue's): p50 and p99 in µs. */
async function latency(url: string, apiKey: string) {
  const headers = { authorization: `Bearer ${apiKey}` };
  const once = async () => {
    const began = performance.now();
    const res = await fetch(url, { headers });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
    return (performance.now() - began) * 1000;
  };
  for (let i = 0; i < WARM_UP; i++) await once();
  const samples: number[] = [];
  for (let i = 0; i < REQUESTS; i++) samples.push(await once());
  return { 'p50 µs': quantile(samples, 0.5), 'p99 µs': quantile(samples, 0.99) };
}

/** Streams the whole export once, reading as fast as it comes; the service's RSS before, at its highest, and after. */
async function exportOnce(target: Target, apiKey: string) {
  const before = await target.settledRss();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, target.rss())), 20);
  const began = performance.now();
  const res = await fetch(`${target.url}/api/v1/conversations/export`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  let bytes = 0;
  let lines = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    bytes += chunk.length;
    for (const b of chunk) if (b === 10) lines++;
  }
  const ms = performance.now() - began;
  clearInterval(sampler);
  const after = await target.settledRss();
  return { lines, bytes, ms, before, peak, after };
}

/** The history's list (plain and searched) against the agents list in the same store, and the export's memory. */
export async function history(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'concierge-bench-history-'));
  try {
    const apiKey = await seedAgents(dataDir, CONVERSATIONS);
    await seedConversations(dataDir, CONVERSATIONS);
    const target = await startTarget(
      SERVICE_ENTRY,
      { PORT: '0', DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'warn', RATE_LIMIT_PER_MINUTE: '1000000' },
      MEASURED_MEMORY_ARGS,
    );
    try {
      const agents = await latency(`${target.url}/api/v1/agents?per_page=20`, apiKey);
      const rows = [{ request: 'baseline: GET /agents?per_page=20', ...agents, '× p50': 1 }];
      for (const [name, query] of [
        ['GET /conversations?per_page=20', 'per_page=20'],
        [`GET /conversations?search=${RARE} (20 match)`, `per_page=20&search=${encodeURIComponent(RARE)}`],
        [`GET /conversations?search=${COMMON} (all match)`, `per_page=20&search=${encodeURIComponent(COMMON)}`],
        ['GET /conversations?has_failures=true (none)', 'per_page=20&has_failures=true'],
      ] as const) {
        const figures = await latency(`${target.url}/api/v1/conversations?${query}`, apiKey);
        rows.push({ request: name, ...figures, '× p50': figures['p50 µs'] / agents['p50 µs'] });
      }
      printTable(
        `History list: SQLite, ${CONVERSATIONS} conversations (2 turns each) and ${CONVERSATIONS} agents, ${REQUESTS} sequential requests each after ${WARM_UP} warm-up`,
        rows,
        { '× p50': 2 },
      );
      console.log('aim: a search p50 within 2× the agents list');

      const exported = await exportOnce(target, apiKey);
      const mb = (n: number) => n / 1024 / 1024;
      printTable(
        `Export: GET /conversations/export, ${exported.lines} conversations, ${mb(exported.bytes).toFixed(1)} MB NDJSON in ${(exported.ms / 1000).toFixed(1)} s`,
        [
          { measure: 'service RSS before (after a full GC), MB', value: mb(exported.before) },
          { measure: 'service RSS highest while streaming, MB', value: mb(exported.peak) },
          { measure: 'service RSS after (after a full GC), MB', value: mb(exported.after) },
          { measure: "highest − before, MB (vs the export's size)", value: mb(exported.peak - exported.before) },
        ],
        { value: 1 },
      );
    } finally {
      await target.stop();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
