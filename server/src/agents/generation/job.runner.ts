import type { Logger } from 'pino';
import { findAgentById, transitionAgent } from '../agent.repository.js';
import { BackgroundLoop } from '../../shared/background-loop.js';
import { isoIn, isoNow } from '../../shared/time.js';
import type { Db } from '../../database.js';
import { isStoreUnavailable, type StoreHealth } from '../../store/store-health.js';
import type { AgentGenerator } from './agent-generator.js';
import { claimJob, findClaimableJobs, type JobRow, releaseJobs, updateJob } from './job.repository.js';

export interface JobRunnerSettings {
  /** How long a claim holds without renewal; a crashed worker's jobs are taken over after it. */
  leaseMs?: number;
  pollMs?: number;
  maxAttempts?: number;
}

const DEFAULTS = { leaseMs: 30_000, pollMs: 1_000, maxAttempts: 3 };
/** How long a stop waits for an aborted generation to wind down before leaving it behind. */
const STOP_GRACE_MS = 2_000;

/**
 * Runs agent generation jobs from the store, one at a time per node. Jobs are claimed with a
 * lease, so a job interrupted by a crash is resumed (or failed after `maxAttempts`) by the next
 * node to poll, and a graceful stop hands its job straight back.
 */
export class JobRunner {
  private readonly settings: typeof DEFAULTS;
  private readonly loop: BackgroundLoop;
  private current: string | undefined;
  private stopped = true;
  private abort = new AbortController();

  constructor(
    private readonly parts: { db: Db; generator: AgentGenerator; logger: Logger; health: StoreHealth },
    settings: JobRunnerSettings = {},
  ) {
    this.settings = { ...DEFAULTS, ...settings };
    this.loop = new BackgroundLoop(
      { what: 'job runner', pass: () => this.drain(), health: parts.health },
      { everyMs: this.settings.pollMs },
    );
  }

  start(): void {
    this.stopped = false;
    this.abort = new AbortController();
    this.loop.start();
    this.poke();
  }

  /** Looks for work now (called after a job is queued) instead of waiting for the next poll. */
  poke(): void {
    if (!this.stopped) void this.loop.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const running = this.loop.stop();
    this.abort.abort();
    const current = this.current;
    if (current) await releaseJobs(this.parts.db, [current], isoNow()).catch(() => undefined);
    // A generator that ignores the abort is left behind: once stopped, nothing it returns is written.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([running, new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_GRACE_MS)))]);
    clearTimeout(timer);
  }

  private async drain(): Promise<void> {
    while (!this.stopped) {
      const job = await this.claimNext();
      if (!job) return;
      await this.run(job);
    }
  }

  private async claimNext(): Promise<JobRow | undefined> {
    const now = isoNow();
    for (const candidate of await findClaimableJobs(this.parts.db, now, 10)) {
      if (candidate.attempts >= this.settings.maxAttempts) {
        await this.fail(candidate.id, candidate.agent_id, 'generation was interrupted too many times');
        continue;
      }
      if (await claimJob(this.parts.db, candidate, isoIn(this.settings.leaseMs), now)) return candidate;
    }
    return undefined;
  }

  private async run(job: JobRow): Promise<void> {
    this.current = job.id;
    try {
      const agent = await findAgentById(this.parts.db, job.agent_id);
      if (!agent) {
        await this.fail(job.id, job.agent_id, 'the agent was deleted');
        return;
      }
      const spec = await this.parts.generator.generate(agent, {
        signal: this.abort.signal,
        reportProgress: async (percent) => {
          if (this.stopped) throw new Error('runner stopped');
          const progress = Math.max(0, Math.min(99, Math.round(percent)));
          // Progress is a courtesy: a store outage does not cost the generation its attempt.
          await updateJob(this.parts.db, job.id, {
            progress,
            lease_expires_at: isoIn(this.settings.leaseMs),
            updated_at: isoNow(),
          }).catch((err) => {
            if (!isStoreUnavailable(err)) throw err;
            this.parts.health.failed(err, 'reporting generation progress');
          });
        },
      });
      if (this.stopped) return;
      const text = JSON.stringify(spec);
      await this.parts.health.persist(
        'finishing a generation job',
        () =>
          this.parts.db.transaction().execute(async (trx) => {
            const now = isoNow();
            await transitionAgent(trx, job.agent_id, 'generating', 'draft', {
              generated_spec: text,
              draft_spec: text,
              updated_at: now,
            });
            await updateJob(trx, job.id, {
              status: 'succeeded',
              progress: 100,
              error: null,
              lease_expires_at: null,
              updated_at: now,
            });
          }),
        this.abort.signal,
      );
    } catch (err) {
      if (this.stopped) return;
      let settle: () => Promise<void>;
      if (isStoreUnavailable(err)) {
        // The store failed, not the generation: the attempt is given back.
        this.parts.health.failed(err, 'generation');
        settle = () => releaseJobs(this.parts.db, [job.id], isoNow());
      } else {
        this.parts.logger.warn({ err, job_id: job.id }, 'generation attempt failed');
        settle = () =>
          job.attempts + 1 >= this.settings.maxAttempts
            ? this.fail(job.id, job.agent_id, err instanceof Error ? err.message : 'generation failed')
            : updateJob(this.parts.db, job.id, { status: 'queued', lease_expires_at: null, updated_at: isoNow() });
      }
      await this.parts.health.persist('settling a generation job', settle, this.abort.signal);
    } finally {
      this.current = undefined;
    }
  }

  private async fail(jobId: string, agentId: string, error: string): Promise<void> {
    const now = isoNow();
    await this.parts.db.transaction().execute(async (trx) => {
      await transitionAgent(trx, agentId, 'generating', 'failed', { updated_at: now });
      await updateJob(trx, jobId, { status: 'failed', error, lease_expires_at: null, updated_at: now });
    });
  }
}
