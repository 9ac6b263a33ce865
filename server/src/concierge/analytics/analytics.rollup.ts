import { createHash } from 'node:crypto';
import { isoNow } from '../../shared/time.js';
import type { Trx } from '../../database.js';
import type { DeploymentContext } from '../../deployments/deployment-context.js';
import { proactiveCounts, type Tally } from './tally.js';
import type { LatencyMetric, RollupRows } from './analytics.table.js';
import { binOf } from './latency-bins.js';
import { redactionKinds } from '#protocol/privacy';
import { writeRollup } from './analytics.repository.js';

/** The hour a moment falls in, as the rollup keys it. */
export const hourOf = (iso: string): string => `${iso.slice(0, 13)}:00:00.000Z`;

/** A visitor as the rollup keeps them: a digest of the customer and the token's `sub`, never the `sub` itself. */
export const visitorDigest = (customerId: string, sub: string): string =>
  createHash('sha256').update(`${customerId}\n${sub}`).digest('base64url').slice(0, 22);

/**
 * The analytics rollup (README, Knowing how it goes), kept in the commit of what it counts: each
 * unit of work adds its tallies to its transaction's rows, and the batch writes them last, in key
 * order, one statement per table, so batches running at once never deadlock on them and a busy
 * hour costs one upsert per batch, not per turn.
 */
export class AnalyticsRollup {
  readonly #pending = new WeakMap<Trx, RollupRows>();

  add(trx: Trx, dep: DeploymentContext, tally: Tally): void {
    let rows = this.#pending.get(trx);
    if (!rows) this.#pending.set(trx, (rows = emptyRollupRows()));
    addTally(rows, dep, tally);
  }

  /** Writes what this transaction's units counted; call last in the transaction. */
  async write(trx: Trx): Promise<void> {
    const rows = this.#pending.get(trx);
    if (!rows) return;
    this.#pending.delete(trx);
    await writeRollup(trx, rows);
  }
}

export const emptyRollupRows = (): RollupRows => ({
  hours: new Map(),
  latency: new Map(),
  visitors: new Map(),
  proactive: new Map(),
});

/** Adds one tally to `rows`: a turn's facts in the hour it was taken, the rest in this hour. */
export function addTally(
  rows: RollupRows,
  dep: Pick<DeploymentContext, 'id' | 'customerId' | 'agentId'>,
  tally: Tally,
): void {
  const hour = hourOf(tally.at ?? isoNow());
  const owner = { deployment_id: dep.id, hour, customer_id: dep.customerId, agent_id: dep.agentId };
  const key = `${dep.id}\n${hour}`;
  // The hour's row only when the tally moves one of its counts: a reply moves none, and an upsert
  // adding zeros was a statement of every reply's commit for nothing.
  const hourRow = () => {
    let counts = rows.hours.get(key);
    if (!counts) {
      // The owner's columns last, in every row here: V8 adds each property written after a spread in a
      // literal by a slow path of its own, which made this row alone 17 µs of a reply's 400
      // (docs/performance.md, Durable floors).
      counts = {
        conversations: 0,
        turns: 0,
        failed_hook_rejected: 0,
        failed_hook_failed: 0,
        failed_reply_timeout: 0,
        failed_conversation_ended: 0,
        failed_model_failed: 0,
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
        ...owner,
      };
      rows.hours.set(key, counts);
    }
    return counts;
  };
  if (tally.conversations) hourRow().conversations += tally.conversations;
  if (tally.turns) hourRow().turns += tally.turns;
  if (tally.handoffs) hourRow().handoffs += tally.handoffs;
  for (const reason of tally.failed ?? []) hourRow()[`failed_${reason}`] += 1;
  for (const kind of redactionKinds) {
    const redacted = tally.redactions?.[kind];
    if (redacted) hourRow()[`redacted_${kind}`] += redacted;
  }
  for (const outcome of tally.guardrails ?? []) hourRow()[`guardrail_${outcome}`] += 1;
  if (tally.feedback && tally.feedback.rating !== tally.feedback.previous) {
    const counts = hourRow();
    counts[`feedback_${tally.feedback.rating}`] += 1;
    if (tally.feedback.previous) counts[`feedback_${tally.feedback.previous}`] -= 1;
  }
  const measure = (metric: LatencyMetric, ms: number | undefined) => {
    if (ms === undefined) return;
    const bin = binOf(ms);
    const binKey = `${key}\n${metric}\n${bin}`;
    const row = rows.latency.get(binKey);
    if (row) row.count += 1;
    else rows.latency.set(binKey, { metric, bin, count: 1, ...owner });
  };
  measure('reply', tally.resolvedAfterMs);
  measure('first_part', tally.firstPartAfterMs);
  measure('recognition', tally.recognitionMs);
  measure('voice_to_voice', tally.voiceToVoiceMs);
  for (const ms of tally.hookMs ?? []) measure('hook', ms);
  if (tally.proactive) {
    const { rule, ...figures } = tally.proactive;
    const ruleKey = `${key}\n${rule}`;
    let row = rows.proactive.get(ruleKey);
    if (!row)
      rows.proactive.set(ruleKey, (row = { rule_id: rule, shown: 0, opened: 0, conversations: 0, turns: 0, ...owner }));
    for (const count of proactiveCounts) row[count] += figures[count] ?? 0;
  }
  if (tally.visitor !== undefined) {
    const visitor = visitorDigest(dep.customerId, tally.visitor);
    rows.visitors.set(`${key}\n${visitor}`, { visitor, ...owner });
  }
}
