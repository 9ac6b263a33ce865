import { BackgroundLoop } from '../../shared/background-loop.js';
import { isoIn, isoNow } from '../../shared/time.js';
import type { Db } from '../../store/database.js';
import type { StoreHealth } from '../../store/store-health.js';
import { addDiagnostics, diagnosticsSince } from './diagnostics.repository.js';
import type { DeploymentDiagnosticTable, RefusalReason, TokenCause } from './diagnostics.table.js';

const FLUSH_INTERVAL_MS = 5_000;
/** Distinct origins or causes kept per deployment between two writes; the rest count as one: a flood of made-up origins costs nothing. */
const DETAILS_PER_DEPLOYMENT = 100;
const OTHER = '(other)';
const DAYS = 7;

const keyOf = (row: Pick<DeploymentDiagnosticTable, 'deployment_id' | 'day' | 'kind' | 'reason' | 'detail'>): string => `${row.deployment_id}\n${row.day}\n${row.kind}\n${row.reason}\n${row.detail}`;

export interface Diagnostics {
  origins: { origin: string; sessions: number; last_seen_at: string }[];
  refused: { reason: RefusalReason; origin: string | null; cause: TokenCause | null; count: number; last_at: string }[];
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

  constructor(private readonly parts: { db: Db; health: StoreHealth }) {
    this.#flushing = new BackgroundLoop({ what: 'diagnostics flush', pass: () => this.#write(), health: parts.health }, { everyMs: FLUSH_INTERVAL_MS });
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
    return {
      origins: seen.map((r) => ({ origin: r.detail, sessions: r.count, last_seen_at: r.last_at })),
      refused: all
        .filter((r) => r.kind === 'refused')
        .map((r) => ({
          reason: r.reason as RefusalReason,
          origin: r.reason === 'origin_not_allowed' ? r.detail : null,
          cause: r.reason === 'token_invalid' ? ((r.detail || null) as TokenCause | null) : null,
          count: r.count,
          last_at: r.last_at,
        })),
      last_session_at: seen.reduce<string | null>((last, r) => (!last || r.last_at > last ? r.last_at : last), null),
    };
  }

  #count(deploymentId: string, kind: DeploymentDiagnosticTable['kind'], reason: string, given: string): void {
    const now = isoNow();
    const day = now.slice(0, 10);
    const counted = { deployment_id: deploymentId, day, kind, reason, detail: given.slice(0, 200), count: 1, last_at: now };
    if (!this.#pending.has(keyOf(counted))) {
      const kept = this.#details.get(deploymentId) ?? 0;
      if (kept >= DETAILS_PER_DEPLOYMENT) counted.detail = OTHER;
      else this.#details.set(deploymentId, kept + 1);
    }
    this.#add(counted);
  }

  /** Adds a row's count to the pending one of its key. */
  #add(row: DeploymentDiagnosticTable): void {
    const pending = this.#pending.get(keyOf(row));
    if (!pending) return void this.#pending.set(keyOf(row), { ...row });
    pending.count += row.count;
    if (row.last_at > pending.last_at) pending.last_at = row.last_at;
  }

  async #write(): Promise<void> {
    if (!this.#pending.size) return;
    const rows = [...this.#pending.values()];
    this.#pending = new Map();
    this.#details.clear();
    try {
      await addDiagnostics(this.parts.db, rows);
    } catch (err) {
      // Kept for the next write rather than lost, added to what was counted meanwhile.
      for (const row of rows) this.#add(row);
      throw err;
    }
  }
}
