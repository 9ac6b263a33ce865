import { BackgroundLoop } from '../../shared/background-loop.js';
import { isoIn, isoNow } from '../../shared/time.js';
import type { Db } from '../../database.js';
import type { StoreHealth } from '../../store/store-health.js';
import {
  addCount,
  addDiagnostics,
  deleteDiagnosticsBefore,
  diagnosticsSince,
  rowKey,
} from './diagnostics.repository.js';
import type { DeploymentDiagnosticTable, RefusalReason, TokenCause } from './diagnostics.table.js';

const FLUSH_INTERVAL_MS = 5_000;
const PURGE_INTERVAL_MS = 3_600_000;
/**
 * Distinct origins or causes a deployment keeps a day (in memory between two writes, and in the
 * store); past them each new one is counted as `(other)`: a flood of made-up origins costs nothing.
 */
export const DETAILS_PER_DAY = 100;
export const OTHER = '(other)';
/** Entries of each list the route answers with, most first; the totals say how many there are. */
export const LISTED = 50;
const DAYS = 7;

export interface Diagnostics {
  origins: { origin: string; sessions: number; last_seen_at: string }[];
  origins_total: number;
  refused: { reason: RefusalReason; origin: string | null; cause: TokenCause | null; count: number; last_at: string }[];
  refused_total: number;
  last_session_at: string | null;
}

/**
 * Install diagnostics (README, Knowing how it goes): what a deployment's widget met, counted in
 * memory and written every few seconds, never a store write per refused upgrade. Reads write
 * what is pending first, so a node always reports its own exactly.
 */
export class InstallDiagnostics {
  #pending = new Map<string, DeploymentDiagnosticTable>();
  readonly #details = new Map<string, number>();
  readonly #flushing: BackgroundLoop;
  #purgedAt = 0;

  constructor(private readonly parts: { db: Db; health: StoreHealth }) {
    const pass = async () => {
      await this.#write();
      await this.#purge();
    };
    this.#flushing = new BackgroundLoop(
      { what: 'diagnostics flush', pass, health: parts.health },
      { everyMs: FLUSH_INTERVAL_MS },
    );
  }

  start(): void {
    this.#flushing.start();
  }

  async stop(): Promise<void> {
    await this.#flushing.stop();
    await this.#write();
  }

  /** A session opened from `origin` (none when the page sent no Origin). */
  opened(deploymentId: string, origin: string | undefined): void {
    this.#count(deploymentId, 'seen', '', origin ?? '');
  }

  refused(deploymentId: string, reason: RefusalReason, detail: string | undefined): void {
    this.#count(deploymentId, 'refused', reason, detail ?? '');
  }

  /** The last 7 days of one deployment. */
  async read(deploymentId: string): Promise<Diagnostics> {
    await this.#flushing.run();
    const rows = await diagnosticsSince(this.parts.db, deploymentId, isoIn(-DAYS * 86_400_000).slice(0, 10));
    const merged = new Map<string, { kind: string; reason: string; detail: string; count: number; last_at: string }>();
    for (const row of rows) {
      const key = `${row.kind}\n${row.reason}\n${row.detail}`;
      const known = merged.get(key);
      if (known) {
        known.count += row.count;
        if (row.last_at > known.last_at) known.last_at = row.last_at;
      } else merged.set(key, { ...row });
    }
    const all = [...merged.values()].sort((a, b) => b.count - a.count);
    const seen = all.filter((r) => r.kind === 'seen');
    const refused = all.filter((r) => r.kind === 'refused');
    return {
      origins: seen.slice(0, LISTED).map((r) => ({ origin: r.detail, sessions: r.count, last_seen_at: r.last_at })),
      origins_total: seen.length,
      refused: refused.slice(0, LISTED).map((r) => ({
        reason: r.reason as RefusalReason,
        origin: r.reason === 'origin_not_allowed' ? r.detail : null,
        cause: r.reason === 'token_invalid' ? ((r.detail || null) as TokenCause | null) : null,
        count: r.count,
        last_at: r.last_at,
      })),
      refused_total: refused.length,
      last_session_at: seen.reduce<string | null>((last, r) => (!last || r.last_at > last ? r.last_at : last), null),
    };
  }

  #count(deploymentId: string, kind: DeploymentDiagnosticTable['kind'], reason: string, given: string): void {
    const now = isoNow();
    const day = now.slice(0, 10);
    const counted = {
      deployment_id: deploymentId,
      day,
      kind,
      reason,
      detail: given.slice(0, 200),
      count: 1,
      last_at: now,
    };
    if (!this.#pending.has(rowKey(counted))) {
      const kept = this.#details.get(deploymentId) ?? 0;
      if (kept >= DETAILS_PER_DAY) counted.detail = OTHER;
      else this.#details.set(deploymentId, kept + 1);
    }
    addCount(this.#pending, counted);
  }

  async #write(): Promise<void> {
    if (!this.#pending.size) return;
    const rows = [...this.#pending.values()];
    this.#pending = new Map();
    this.#details.clear();
    try {
      await addDiagnostics(this.parts.db, rows, { distinctPerDay: DETAILS_PER_DAY, other: OTHER });
    } catch (err) {
      // Kept for the next write rather than lost, added to what was counted meanwhile.
      for (const row of rows) addCount(this.#pending, row);
      throw err;
    }
  }

  /** Days older than the seven the route speaks of go, checked once an hour. */
  async #purge(now = Date.now()): Promise<void> {
    if (now - this.#purgedAt < PURGE_INTERVAL_MS) return;
    await deleteDiagnosticsBefore(this.parts.db, isoIn(-DAYS * 86_400_000).slice(0, 10));
    this.#purgedAt = now;
  }
}
