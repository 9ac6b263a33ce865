import { notFound } from '../../errors.js';
import type { Db } from '../../database.js';
import {
  countsByBucket,
  criterionCounts,
  latencyByBucket,
  proactiveByBucket,
  visitorsByBucket,
} from './analytics.repository.js';
import { proactiveCounts } from './tally.js';
import { type Analytics, type AnalyticsQuery, INTERVAL_MS } from './analytics.schemas.js';
import type { LatencyMetric } from './analytics.table.js';
import { percentilesOf } from './latency-bins.js';

type Counts = Omit<Analytics['totals'], 'proactive'>;
type RuleFigures = Analytics['totals']['proactive'][number];
type Bins = Record<LatencyMetric, Map<number, number>>;

const emptyBins = (): Bins => ({
  hook: new Map(),
  reply: new Map(),
  first_part: new Map(),
  recognition: new Map(),
  voice_to_voice: new Map(),
});
const zero = () => ({
  conversations: 0,
  visitors: 0,
  turns: 0,
  hook_rejected: 0,
  hook_failed: 0,
  reply_timeout: 0,
  conversation_ended: 0,
  model_failed: 0,
  handoffs: 0,
  feedback_up: 0,
  feedback_down: 0,
  redacted_email: 0,
  redacted_phone: 0,
  redacted_card: 0,
  redacted_iban: 0,
  redacted_name: 0,
  redacted_address: 0,
  guardrail_refuse: 0,
  guardrail_retry: 0,
  guardrail_hand_off: 0,
  guardrail_flagged: 0,
});
type Sums = ReturnType<typeof zero>;
/** Each sum and the rollup column it adds up. */
const COLUMNS = [
  ['conversations', 'conversations'],
  ['turns', 'turns'],
  ['hook_rejected', 'failed_hook_rejected'],
  ['hook_failed', 'failed_hook_failed'],
  ['reply_timeout', 'failed_reply_timeout'],
  ['conversation_ended', 'failed_conversation_ended'],
  ['model_failed', 'failed_model_failed'],
  ['handoffs', 'handoffs'],
  ['feedback_up', 'feedback_up'],
  ['feedback_down', 'feedback_down'],
  ['redacted_email', 'redacted_email'],
  ['redacted_phone', 'redacted_phone'],
  ['redacted_card', 'redacted_card'],
  ['redacted_iban', 'redacted_iban'],
  ['redacted_name', 'redacted_name'],
  ['redacted_address', 'redacted_address'],
  ['guardrail_refuse', 'guardrail_refuse'],
  ['guardrail_retry', 'guardrail_retry'],
  ['guardrail_hand_off', 'guardrail_hand_off'],
  ['guardrail_flagged', 'guardrail_flagged'],
] as const;

/** Each criterion's counts, by agent and version, with its success rate among the results that could tell. */
function criterionFiguresOf(rows: Awaited<ReturnType<typeof criterionCounts>>): Analytics['criteria'] {
  const figures = new Map<string, Analytics['criteria'][number]>();
  for (const row of rows) {
    const key = `${row.agent_id}\n${row.agent_version}\n${row.name}`;
    let into = figures.get(key);
    if (!into)
      figures.set(
        key,
        (into = {
          agent_id: row.agent_id,
          agent_version: row.agent_version,
          criterion: row.name,
          success: 0,
          failure: 0,
          unknown: 0,
          success_rate: null,
        }),
      );
    into[row.value as 'success' | 'failure' | 'unknown'] += Number(row.count);
  }
  for (const f of figures.values()) f.success_rate = f.success + f.failure ? f.success / (f.success + f.failure) : null;
  return [...figures.values()];
}

const addBins = (into: Map<number, number>, bin: number, count: number) => into.set(bin, (into.get(bin) ?? 0) + count);

function countsOf(sums: Sums, bins: Bins): Counts {
  return {
    conversations: sums.conversations,
    visitors: sums.visitors,
    turns: sums.turns,
    turns_failed: {
      hook_rejected: sums.hook_rejected,
      hook_failed: sums.hook_failed,
      reply_timeout: sums.reply_timeout,
      conversation_ended: sums.conversation_ended,
      model_failed: sums.model_failed,
    },
    handoffs: sums.handoffs,
    feedback_up: sums.feedback_up,
    feedback_down: sums.feedback_down,
    redactions: {
      email: sums.redacted_email,
      phone: sums.redacted_phone,
      card: sums.redacted_card,
      iban: sums.redacted_iban,
      name: sums.redacted_name,
      address: sums.redacted_address,
    },
    guardrails: {
      refuse: sums.guardrail_refuse,
      retry: sums.guardrail_retry,
      hand_off: sums.guardrail_hand_off,
      flagged: sums.guardrail_flagged,
    },
    hook_latency_ms: percentilesOf(bins.hook),
    time_to_reply_ms: percentilesOf(bins.reply),
    time_to_first_part_ms: percentilesOf(bins.first_part),
    recognition_ms: percentilesOf(bins.recognition),
    voice_to_voice_ms: percentilesOf(bins.voice_to_voice),
  };
}

/**
 * `GET /api/v1/analytics` (README, Knowing how it goes): a customer's counts and latencies per UTC
 * hour or day, from the rollup the turns keep as they happen: three grouped reads, whatever the
 * number of turns behind them.
 */
export class AnalyticsService {
  constructor(private readonly parts: { db: Db }) {}

  async analytics(customerId: string, query: AnalyticsQuery): Promise<Analytics> {
    const { db } = this.parts;
    await this.#owned(customerId, query);
    const scope = {
      customerId,
      from: query.from,
      to: query.to,
      deploymentId: query.deployment_id,
      agentId: query.agent_id,
      keyLength: query.interval === 'day' ? 10 : 13,
    } as const;
    const [counts, latency, visitors, proactive, criteria] = await Promise.all([
      countsByBucket(db, scope),
      latencyByBucket(db, scope),
      visitorsByBucket(db, scope),
      proactiveByBucket(db, scope),
      criterionCounts(db, scope),
    ]);

    const starts: string[] = [];
    for (let t = Date.parse(query.from); t < Date.parse(query.to); t += INTERVAL_MS[query.interval])
      starts.push(new Date(t).toISOString());
    const keyOf = (start: string) => start.slice(0, scope.keyLength);
    const sums = new Map(starts.map((s) => [keyOf(s), zero()]));
    const bins = new Map(starts.map((s) => [keyOf(s), emptyBins()]));
    const total = zero();
    const totalBins = emptyBins();
    for (const row of counts) {
      const into = sums.get(row.bucket)!;
      for (const [key, column] of COLUMNS) {
        into[key] += Number(row[column]);
        total[key] += Number(row[column]);
      }
    }
    for (const row of latency) {
      addBins(bins.get(row.bucket)![row.metric], row.bin, Number(row.count));
      addBins(totalBins[row.metric], row.bin, Number(row.count));
    }
    for (const { bucket, visitors: n } of visitors.buckets) sums.get(bucket)!.visitors = n;
    total.visitors = visitors.total;
    const rules = new Map(starts.map((s) => [keyOf(s), new Map<string, RuleFigures>()]));
    const ruleTotals = new Map<string, RuleFigures>();
    for (const row of proactive)
      for (const into of [rules.get(row.bucket)!, ruleTotals]) {
        const key = `${row.deployment_id}\n${row.rule_id}`;
        let figures = into.get(key);
        if (!figures)
          into.set(
            key,
            (figures = {
              deployment_id: row.deployment_id,
              rule_id: row.rule_id,
              shown: 0,
              opened: 0,
              conversations: 0,
              turns: 0,
            }),
          );
        for (const count of proactiveCounts) figures[count] += Number(row[count]);
      }
    return {
      interval: query.interval,
      from: query.from,
      to: query.to,
      buckets: starts.map((start) => ({
        start,
        ...countsOf(sums.get(keyOf(start))!, bins.get(keyOf(start))!),
        proactive: [...rules.get(keyOf(start))!.values()],
      })),
      totals: { ...countsOf(total, totalBins), proactive: [...ruleTotals.values()] },
      criteria: criterionFiguresOf(criteria),
    };
  }

  /** A deployment or agent named in the query must be the customer's own: another's is not found, as if it did not exist. */
  async #owned(customerId: string, query: AnalyticsQuery): Promise<void> {
    const { db } = this.parts;
    if (
      query.deployment_id &&
      !(await db
        .selectFrom('deployments')
        .select('id')
        .where('id', '=', query.deployment_id)
        .where('customer_id', '=', customerId)
        .executeTakeFirst())
    )
      throw notFound('Deployment');
    if (
      query.agent_id &&
      !(await db
        .selectFrom('agents')
        .select('id')
        .where('id', '=', query.agent_id)
        .where('customer_id', '=', customerId)
        .executeTakeFirst())
    )
      throw notFound('Agent');
  }
}
