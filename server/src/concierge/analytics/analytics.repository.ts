import { type SelectQueryBuilder, sql } from 'kysely';
import type { Database, Db, Trx } from '../../database.js';
import { rowInserter } from '../../store/query-shape.js';
import type { RollupRows } from './analytics.table.js';
import { type ProactiveCount, proactiveCounts } from './tally.js';

/** The counts of an hour's row, each added to the stored one by an upsert. */
const HOUR_COUNTS = [
  'conversations',
  'turns',
  'failed_hook_rejected',
  'failed_hook_failed',
  'failed_reply_timeout',
  'failed_conversation_ended',
  'failed_model_failed',
  'handoffs',
  'feedback_up',
  'feedback_down',
  'redacted_email',
  'redacted_phone',
  'redacted_card',
  'redacted_iban',
  'redacted_name',
  'redacted_address',
  'guardrail_refuse',
  'guardrail_retry',
  'guardrail_hand_off',
  'guardrail_flagged',
] as const;
/** Rows per statement: well under SQLite's 32,766 variables and PostgreSQL's 65,535 parameters. */
const CHUNK = 500;

/** A map's rows in key order, in statements of at most {@link CHUNK}; a reply's single row costs no sorting or copying. */
function chunksOf<T>(map: Map<string, T>): T[][] {
  if (map.size <= 1) return map.size ? [[map.values().next().value!]] : [];
  const rows = [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
  return Array.from({ length: Math.ceil(rows.length / CHUNK) }, (_, i) => rows.slice(i * CHUNK, (i + 1) * CHUNK));
}

const upsertHours = rowInserter('analytics_hours', { key: ['deployment_id', 'hour'], add: HOUR_COUNTS });
const upsertLatency = rowInserter('analytics_latency', {
  key: ['deployment_id', 'hour', 'metric', 'bin'],
  add: ['count'],
});
const upsertProactive = rowInserter('analytics_proactive', {
  key: ['deployment_id', 'hour', 'rule_id'],
  add: proactiveCounts,
});
const insertVisitors = rowInserter('analytics_visitors', { key: [] });

/** Adds a transaction's rollup rows to the stored ones, in key order, each statement compiled once per row count. */
export async function writeRollup(trx: Trx, rows: RollupRows): Promise<void> {
  for (const chunk of chunksOf(rows.hours)) await upsertHours(trx, chunk);
  for (const chunk of chunksOf(rows.latency)) await upsertLatency(trx, chunk);
  for (const chunk of chunksOf(rows.proactive)) await upsertProactive(trx, chunk);
  for (const chunk of chunksOf(rows.visitors)) await insertVisitors(trx, chunk);
}

/** The rows of a customer's range, narrowed to a deployment or an agent. */
export interface RollupScope {
  customerId: string;
  from: string;
  to: string;
  deploymentId?: string;
  agentId?: string;
  /** The length of a bucket's key in an hour's text: 10 for days, 13 for hours. */
  keyLength: 10 | 13;
}

function scoped<
  QB extends SelectQueryBuilder<
    Database,
    'analytics_hours' | 'analytics_latency' | 'analytics_visitors' | 'analytics_proactive',
    object
  >,
>(qb: QB, scope: RollupScope): QB {
  let q = qb
    .where('customer_id', '=', scope.customerId)
    .where('hour', '>=', scope.from)
    .where('hour', '<', scope.to) as QB;
  if (scope.deploymentId) q = q.where('deployment_id', '=', scope.deploymentId) as QB;
  if (scope.agentId) q = q.where('agent_id', '=', scope.agentId) as QB;
  return q;
}

const bucketOf = (scope: RollupScope) => sql<string>`substr(hour, 1, ${sql.lit(scope.keyLength)})`;

/** Each bucket's counts, summed over its hours and deployments. */
export function countsByBucket(db: Db, scope: RollupScope) {
  const sum = (column: (typeof HOUR_COUNTS)[number]) => sql<number>`sum(${sql.ref(column)})`.as(column);
  return scoped(db.selectFrom('analytics_hours'), scope)
    .select([bucketOf(scope).as('bucket'), ...HOUR_COUNTS.map(sum)])
    .groupBy(bucketOf(scope))
    .execute();
}

/** Each bucket's latency bins. */
export function latencyByBucket(db: Db, scope: RollupScope) {
  return scoped(db.selectFrom('analytics_latency'), scope)
    .select([bucketOf(scope).as('bucket'), 'metric', 'bin', sql<number>`sum(count)`.as('count')])
    .groupBy([bucketOf(scope), 'metric', 'bin'])
    .execute();
}

/** Each bucket's figures of each greeting rule (README, Greeting visitors first). */
export function proactiveByBucket(db: Db, scope: RollupScope) {
  const sum = (column: ProactiveCount) => sql<number>`sum(${sql.ref(column)})`.as(column);
  return scoped(db.selectFrom('analytics_proactive'), scope)
    .select([bucketOf(scope).as('bucket'), 'deployment_id', 'rule_id', ...proactiveCounts.map(sum)])
    .groupBy([bucketOf(scope), 'deployment_id', 'rule_id'])
    .execute();
}

/** Each bucket's distinct visitors, and the range's. */
export async function visitorsByBucket(
  db: Db,
  scope: RollupScope,
): Promise<{ buckets: { bucket: string; visitors: number }[]; total: number }> {
  const distinct = sql<number>`count(distinct visitor)`;
  const [buckets, total] = await Promise.all([
    scoped(db.selectFrom('analytics_visitors'), scope)
      .select([bucketOf(scope).as('bucket'), distinct.as('visitors')])
      .groupBy(bucketOf(scope))
      .execute(),
    scoped(db.selectFrom('analytics_visitors'), scope).select(distinct.as('visitors')).executeTakeFirstOrThrow(),
  ]);
  return {
    buckets: buckets.map((b) => ({ bucket: b.bucket, visitors: Number(b.visitors) })),
    total: Number(total.visitors),
  };
}

/**
 * Each analysis criterion's results by agent and version, over conversations analysed in the scope's
 * window (README, Tests and analysis): the success rates analytics gives.
 */
export async function criterionCounts(db: Db, scope: RollupScope) {
  let query = db
    .selectFrom('conversation_analysis_values as v')
    .select(['v.agent_id', 'v.agent_version', 'v.name', 'v.value', sql<number | string>`count(*)`.as('count')])
    .where('v.customer_id', '=', scope.customerId)
    .where('v.kind', '=', 'criterion')
    .where('v.analyzed_at', '>=', scope.from)
    .where('v.analyzed_at', '<', scope.to);
  if (scope.agentId) query = query.where('v.agent_id', '=', scope.agentId);
  const deploymentId = scope.deploymentId;
  if (deploymentId)
    query = query.where('v.conversation_id', 'in', (eb) =>
      eb.selectFrom('conversations as c').select('c.id').where('c.deployment_id', '=', deploymentId),
    );
  return query
    .groupBy(['v.agent_id', 'v.agent_version', 'v.name', 'v.value'])
    .orderBy('v.agent_id')
    .orderBy('v.agent_version')
    .orderBy('v.name')
    .execute();
}
