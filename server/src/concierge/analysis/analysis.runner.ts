import { keepsWords } from '../privacy/keeping.js';
import type { Logger } from 'pino';
import type { Db } from '../../database.js';
import type { DeploymentDirectory } from '../../deployments/deployment-context.js';
import { BackgroundLoop } from '../../shared/background-loop.js';
import { LoopRoom } from '../../shared/loop-room.js';
import type { EgressPolicy } from '../../shared/egress.js';
import { isoIn, isoNow } from '../../shared/time.js';
import type { StoreHealth } from '../../store/store-health.js';
import type { ConversationSpecs } from '../conversations/conversation-spec.js';
import { findConversation } from '../conversations/conversation.repository.js';
import type { EventRecorder } from '../events/event.recorder.js';
import { recentTalk } from '../events/event.repository.js';
import type { EvaluationModels } from '../models/evaluation-model.js';
import { cannotRun } from '../models/evaluation-model.js';
import { analyse } from './analyst.js';
import {
  type AnalysisRow,
  claimableAnalyses,
  claimAnalysis,
  insertAnalysisValues,
  queueAnalysis,
  quietConversations,
  releaseAnalyses,
  settleAnalysis,
} from './analysis.repository.js';
import type { ConversationAnalysis } from '#protocol/conversation-analysis';
import { talkText } from './talk-text.js';

export interface AnalysisRunnerSettings {
  pollMs?: number;
  /** How long a claim holds; a node that dies mid-analysis leaves it to another after it. */
  leaseMs?: number;
  /** A conversation quiet this long is analysed as if it had ended. */
  quietMs?: number;
  maxAttempts?: number;
  /** Analyses one node runs at once. */
  atOnce?: number;
}

const DEFAULTS = { pollMs: 2_000, leaseMs: 60_000, quietMs: 30 * 60_000, maxAttempts: 3, atOnce: 4 };
/** An analysis's answer may take this long (less with a short lease). */
const ANALYSIS_TIMEOUT_MS = 30_000;
/** A failed attempt is tried again this much later. */
const RETRY_AFTER_MS = 60_000;
/** Past this share of the event loop busy, analyses wait (a quarter of a second at most): turns and replies go first. */
const BUSY_LOOP = 0.6;
/** How far back the first look for quiet conversations goes, and how many it reads at a time. */
const QUIET_LOOKBACK_MS = 24 * 3_600_000;
const QUIET_STEP = 100;
/** The turns, replies and messages read back for an analysis at most (the newest). */
const TALK_READ = 400;

export interface AnalysisRunnerParts {
  db: Db;
  deployments: Pick<DeploymentDirectory, 'get'>;
  specs: Pick<ConversationSpecs, 'of'>;
  models: Pick<EvaluationModels, 'of'>;
  events: EventRecorder;
  egress: EgressPolicy;
  logger: Logger;
  health: StoreHealth;
}

/**
 * Analyses each conversation once when it ends or has been quiet 30 minutes (README, Tests and
 * analysis): queued in the store, claimed with a lease by whichever node polls first, the result
 * stored with its values and told as `conversation.analyzed` in one unit of work that commits only
 * while the claim is still the node's. A node that dies mid-analysis leaves it to the next.
 */
export class AnalysisRunner {
  private readonly settings: typeof DEFAULTS;
  private readonly loop: BackgroundLoop;
  /** The analyses running here, by conversation, with their customer. */
  readonly #running = new Map<string, string>();
  /** Where the look for quiet conversations stopped. */
  #quietAfter: { updated_at: string; id: string } | undefined;
  readonly #room = new LoopRoom({ maxUtilization: BUSY_LOOP, pauseMs: 20, maxWaitMs: 250 });
  #abort = new AbortController();

  constructor(
    private readonly parts: AnalysisRunnerParts,
    settings: AnalysisRunnerSettings = {},
  ) {
    this.settings = { ...DEFAULTS, ...settings };
    this.loop = new BackgroundLoop(
      { what: 'conversation analysis', pass: () => this.pass(), health: parts.health },
      { everyMs: this.settings.pollMs },
    );
  }

  start(): void {
    this.#abort = new AbortController();
    this.loop.start();
  }

  async stop(): Promise<void> {
    const pass = this.loop.stop();
    this.#abort.abort();
    await releaseAnalyses(this.parts.db, [...this.#running.keys()], isoNow()).catch(() => undefined);
    await pass;
  }

  /**
   * Queues the conversations gone quiet since the last look, then runs what is due, `atOnce` at a
   * time and at most half of them for one customer, so one customer's slow model never holds up
   * another's analyses; resolves when none is left to start and those started are done.
   */
  async pass(): Promise<void> {
    await this.#queueQuiet();
    const started = new Set<Promise<void>>();
    while (!this.#abort.signal.aborted) {
      const free = this.settings.atOnce - this.#running.size;
      const claimed = free > 0 ? await this.#claim(free) : [];
      for (const row of claimed) {
        const work: Promise<void> = this.#analyse(row).finally(() => started.delete(work));
        started.add(work);
      }
      if (claimed.length) {
        // Background work: the next waits while the loop is busy with what visitors wait for.
        await this.#room.wait(this.#abort.signal);
        continue;
      }
      if (!started.size) return;
      // One finishing frees a place; a poll's time on, newly due analyses may take a free one.
      await Promise.race([...started, new Promise((resolve) => setTimeout(resolve, this.settings.pollMs))]);
    }
    await Promise.all(started);
  }

  /**
   * Conversations quiet since `quietMs` are analysed as if they had ended: looked for from where the
   * last look stopped (a day back at first), never the whole history again, and queued only when
   * their agent's spec asks for an analysis.
   */
  async #queueQuiet(): Promise<void> {
    const { db, deployments, specs } = this.parts;
    this.#quietAfter ??= { updated_at: isoIn(-this.settings.quietMs - QUIET_LOOKBACK_MS), id: '' };
    for (;;) {
      const quiet = await quietConversations(db, this.#quietAfter, isoIn(-this.settings.quietMs), QUIET_STEP);
      for (const conversation of quiet) {
        const deployment = await deployments.get(conversation.deployment_id);
        const dep = deployment && (await specs.of(deployment, { ...conversation, test_mocks: null }));
        if (dep?.spec.analysis && keepsWords(dep)) await queueAnalysis(db, { ...conversation, due_at: isoNow() });
        this.#quietAfter = { updated_at: conversation.updated_at, id: conversation.id };
      }
      if (quiet.length < QUIET_STEP) return;
    }
  }

  /** Claims up to `limit` due analyses, of customers with fewer than half the places here. */
  async #claim(limit: number): Promise<AnalysisRow[]> {
    const now = isoNow();
    const perCustomer = Math.max(1, Math.floor(this.settings.atOnce / 2));
    const held = new Map<string, number>();
    for (const customer of this.#running.values()) held.set(customer, (held.get(customer) ?? 0) + 1);
    const full = () => [...held].filter(([, n]) => n >= perCustomer).map(([customer]) => customer);
    const claimed: AnalysisRow[] = [];
    for (const row of await claimableAnalyses(this.parts.db, now, limit * 2, full())) {
      if (claimed.length >= limit) break;
      if ((held.get(row.customer_id) ?? 0) >= perCustomer) continue;
      if (row.attempts >= this.settings.maxAttempts) {
        await settleAnalysis(this.parts.db, row, {
          status: 'failed',
          analysis: null,
          error: row.error ?? 'the analysis was interrupted too many times',
          due_at: row.due_at,
          updated_at: now,
        });
        continue;
      }
      if (await claimAnalysis(this.parts.db, row, isoIn(this.settings.leaseMs), now)) {
        claimed.push({ ...row, attempts: row.attempts + 1, status: 'running' });
        held.set(row.customer_id, (held.get(row.customer_id) ?? 0) + 1);
        this.#running.set(row.conversation_id, row.customer_id);
      }
    }
    return claimed;
  }

  async #analyse(row: AnalysisRow): Promise<void> {
    const { db, deployments, specs, models, egress, logger } = this.parts;
    const settle = (patch: Partial<Parameters<typeof settleAnalysis>[2]>) =>
      settleAnalysis(db, row, {
        status: 'failed',
        analysis: null,
        error: null,
        due_at: row.due_at,
        updated_at: isoNow(),
        ...patch,
      });
    try {
      const conversation = await findConversation(db, row.conversation_id);
      const deployment = conversation && (await deployments.get(conversation.deployment_id));
      if (!conversation || !deployment)
        return void (await settle({ status: 'skipped', error: 'the conversation is gone' }));
      const dep = await specs.of(deployment, conversation);
      const spec = dep.spec.analysis;
      if (!spec) return void (await settle({ status: 'skipped', error: "the agent's spec asks for no analysis" }));
      const model = await models.of(dep.customerId, dep.spec);
      if (typeof model === 'string') return void (await settle({ error: cannotRun('The analysis', model) }));
      const talk = talkText(await recentTalk(db, conversation.id, TALK_READ));
      if (!talk) return void (await settle({ status: 'skipped', error: 'nothing was said' }));
      // Within half the lease: a slow model never lets the claim lapse into a second analysis.
      const timeoutMs = Math.min(ANALYSIS_TIMEOUT_MS, this.settings.leaseMs / 2);
      const answer = await analyse(model, spec, talk, egress, { timeoutMs, signal: this.#abort.signal });
      if (this.#abort.signal.aborted) return;
      if (!answer.ok) {
        logger.warn(
          { conversation_id: row.conversation_id, attempt: row.attempts, cause: answer.why },
          'analysis failed',
        );
        const last = row.attempts >= this.settings.maxAttempts;
        await settle(
          last ? { error: answer.why } : { status: 'queued', error: answer.why, due_at: isoIn(RETRY_AFTER_MS) },
        );
        return;
      }
      const at = isoNow();
      const analysis: ConversationAnalysis = {
        summary: spec.summary ? (answer.value.summary ?? '') : null,
        fields: Object.fromEntries(spec.fields.map((f) => [f.name, answer.value.fields[f.name] ?? null])),
        criteria: Object.fromEntries(spec.criteria.map((c) => [c.id, answer.value.criteria[c.id]!])),
        agent_version: conversation.agent_version,
        at,
      };
      const values = [
        ...Object.entries(analysis.criteria).map(([name, c]) => ({
          kind: 'criterion' as const,
          name,
          value: c.result,
        })),
        ...Object.entries(analysis.fields)
          .filter(([, value]) => value !== null)
          .map(([name, value]) => ({ kind: 'field' as const, name, value: String(value) })),
      ];
      await this.parts.events.write(conversation.id, async (unit) => {
        const kept = await settleAnalysis(unit.trx, row, {
          status: 'done',
          analysis: JSON.stringify(analysis),
          error: null,
          due_at: row.due_at,
          updated_at: at,
        });
        // Another node took the claim over (this one's lease passed): its result stands alone.
        if (!kept) return;
        await insertAnalysisValues(
          unit.trx,
          values.map((v) => ({
            conversation_id: conversation.id,
            customer_id: conversation.customer_id,
            agent_id: conversation.agent_id,
            agent_version: conversation.agent_version,
            analyzed_at: at,
            ...v,
          })),
        );
        await unit.record(
          { dep, conversationId: conversation.id },
          { events: [], transcript: [{ type: 'conversation.analyzed', data: analysis }] },
        );
      });
    } finally {
      this.#running.delete(row.conversation_id);
    }
  }
}
