import { addTally, emptyRollupRows } from '../../server/src/concierge/analytics/analytics.rollup.js';
import type { RollupRows } from '../../server/src/concierge/analytics/analytics.table.js';
import { writeRollup } from '../../server/src/concierge/analytics/analytics.repository.js';
import { AnalyticsService } from '../../server/src/concierge/analytics/analytics.service.js';
import { createCustomer } from '../../server/src/customers/customer.service.js';
import type { ConversationRow } from '../../server/src/concierge/conversations/conversation.repository.js';
import type { TurnRow } from '../../server/src/concierge/conversations/turn.repository.js';
import type { Db } from '../../server/src/database.js';
import type { Store } from '../../server/src/store/db.js';
import { onEachStore } from '../scratch-stores.js';
import { quantile } from '../stats.js';

export const ANALYTICS = { turns: 1_000_000, days: 90, turnsPerConversation: 10, visitors: 40_000, queries: 20 };

const DAY_MS = 86_400_000;

/** A customer whose one deployment took `ANALYTICS.turns` turns over the last `ANALYTICS.days` days: its conversations, turns and rollup, as the service would have stored them. */
async function seed(db: Db): Promise<{ customerId: string; from: string; to: string }> {
  const { customerId } = await createCustomer(db, 'Analytics hotel');
  const now = new Date().toISOString();
  const agentId = crypto.randomUUID();
  const deploymentId = crypto.randomUUID();
  await db
    .insertInto('agents')
    .values({
      id: agentId,
      customer_id: customerId,
      name: 'Front desk',
      description: '',
      status: 'draft',
      version: 0,
      agent_spec: null,
      draft_spec: '{}',
      generated_spec: null,
      test_mode_enabled: 0,
      project_id: null,
      knowledge_base_id: null,
      search_text: 'front desk',
      created_at: now,
      updated_at: now,
    })
    .execute();
  await db
    .insertInto('deployments')
    .values({
      id: deploymentId,
      customer_id: customerId,
      agent_id: agentId,
      environment: 'production',
      status: 'inactive',
      transcript_hook_status: 'active',
      transcript_hook_disabled_at: null,
      transcript_hook_disabled_reason: null,
      call_direction: 'inbound',
      agent_version: null,
      channel_config: '{}',
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
  const dep = { id: deploymentId, customerId, agentId };
  const to = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS + DAY_MS);
  const from = new Date(to.getTime() - ANALYTICS.days * DAY_MS);
  const conversations = ANALYTICS.turns / ANALYTICS.turnsPerConversation;
  // The last conversation's turns (20 s apart) still fall before `to`.
  const spacing = (ANALYTICS.days * DAY_MS - ANALYTICS.turnsPerConversation * 20_000) / conversations;
  // A day's worth at a time: its conversations and turns, and the rollup they make.
  const perDay = conversations / ANALYTICS.days;
  for (let day = 0; day < ANALYTICS.days; day++) {
    const rows: RollupRows = emptyRollupRows();
    const conversationRows: ConversationRow[] = [];
    const turnRows: TurnRow[] = [];
    for (let c = Math.round(day * perDay); c < Math.round((day + 1) * perDay); c++) {
      const started = from.getTime() + c * spacing;
      const id = crypto.randomUUID();
      const sub = `guest-${c % ANALYTICS.visitors}`;
      const at = new Date(started).toISOString();
      conversationRows.push({
        id,
        customer_id: customerId,
        deployment_id: deploymentId,
        agent_id: agentId,
        user_sub: sub,
        user_name: null,
        user_ctx: null,
        status: 'ended' as const,
        end_reason: 'user_ended' as const,
        ended_at: at,
        agent_version: 1,
        last_seq: 30,
        turn_count: ANALYTICS.turnsPerConversation,
        handler: 'agent' as const,
        handler_name: null,
        needs_person: 0 as const,
        handoff_reason: null,
        handoff_at: null,
        preview: 0 as const,
        wait_told_at: null,
        page_context: null,
        proactive_rule: null,
        page_event_at: null,
        tool_confirmation: null,
        test_run_id: null,
        test_mocks: null,
        created_at: at,
        updated_at: at,
      });
      addTally(rows, dep, { at, conversations: 1, visitor: sub });
      for (let t = 0; t < ANALYTICS.turnsPerConversation; t++) {
        const created = new Date(started + t * 20_000).toISOString();
        const failed = (c + t) % 50 === 0;
        const replyMs = 400 + ((c * 7 + t * 13) % 4000);
        turnRows.push({
          id: crypto.randomUUID(),
          conversation_id: id,
          client_turn_id: `c${t}`,
          text: 'When is breakfast?',
          kept: null,
          text_chars: null,
          reply_chars: null,
          guardrails: null,
          mode: 'text' as const,
          language: 'en-US',
          status: failed ? ('failed' as const) : ('resolved' as const),
          delivery_id: crypto.randomUUID(),
          reply_text: failed ? null : 'From 7.',
          failure_reason: failed ? ('hook_failed' as const) : null,
          expires_at: null,
          acknowledged_at: created,
          resolved_at: failed ? null : new Date(Date.parse(created) + replyMs).toISOString(),
          reply_received_at: null,
          reply_duplicates: 0,
          first_part_at: null,
          part_chars: 0,
          reply_actions: null,
          replied_by: null,
          feedback_rating: null,
          feedback_comment: null,
          feedback_at: null,
          recognition_engine: null,
          recognition_ms: null,
          recognition_audio_ms: null,
          voice_speech_ms: null,
          voice_end_of_turn_ms: null,
          voice_first_audio_ms: null,
          heard_text: null,
          heard_interrupted: null,
          heard_at: null,
          knowledge: null,
          hook_node: null,
          answering: 0,
          page_url: null,
          page_title: null,
          created_at: created,
          updated_at: created,
        });
        addTally(rows, dep, {
          at: created,
          turns: 1,
          hookMs: [40 + ((c + t) % 200)],
          ...(failed ? { failed: ['hook_failed' as const] } : { resolvedAfterMs: replyMs }),
        });
      }
    }
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < conversationRows.length; i += 500)
        await trx
          .insertInto('conversations')
          .values(conversationRows.slice(i, i + 500))
          .execute();
      for (let i = 0; i < turnRows.length; i += 500)
        await trx
          .insertInto('turns')
          .values(turnRows.slice(i, i + 500))
          .execute();
      await writeRollup(trx, rows);
    });
  }
  return { customerId, from: from.toISOString(), to: to.toISOString() };
}

export interface AnalyticsTimes {
  store: string;
  rollup: { p50: number; max: number };
  /** The other method, once: the same turns counted and their reply times sorted straight from the turns table. */
  indexed: number;
}

/** Times the 90-day daily query `ANALYTICS.queries` times on one store, and the turns-table alternative once. */
async function timeStore(name: string, store: Store): Promise<AnalyticsTimes> {
  const started = performance.now();
  const { customerId, from, to } = await seed(store.db);
  console.log(
    `  ${name}: seeded ${ANALYTICS.turns.toLocaleString('en')} turns in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  const service = new AnalyticsService({ db: store.db });
  const times: number[] = [];
  for (let i = 0; i < ANALYTICS.queries + 2; i++) {
    const t0 = performance.now();
    const result = await service.analytics(customerId, { from, to, interval: 'day' });
    if (i >= 2) times.push(performance.now() - t0);
    if (result.totals.turns !== ANALYTICS.turns) throw new Error(`analytics counted ${result.totals.turns} turns`);
  }
  const t0 = performance.now();
  const rows = await store.db
    .selectFrom('turns')
    .innerJoin('conversations', 'conversations.id', 'turns.conversation_id')
    .select(['turns.created_at', 'turns.status', 'turns.failure_reason', 'turns.resolved_at'])
    .where('conversations.customer_id', '=', customerId)
    .where('turns.created_at', '>=', from)
    .where('turns.created_at', '<', to)
    .execute();
  rows.map((r) => (r.resolved_at ? Date.parse(r.resolved_at) - Date.parse(r.created_at) : 0)).sort((a, b) => a - b);
  const indexed = performance.now() - t0;
  times.sort((a, b) => a - b);
  return { store: name, rollup: { p50: quantile(times, 0.5), max: times.at(-1)! }, indexed };
}

/** The query on SQLite, and on PostgreSQL when `DATABASE_URL` names one (in a scratch database, dropped after). */
export function analyticsQueryTimes(): Promise<AnalyticsTimes[]> {
  return onEachStore('analytics', timeStore);
}
