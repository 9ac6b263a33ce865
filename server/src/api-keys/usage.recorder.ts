import { type Middleware, routeLabelOf } from '../http/exchange.js';
import { BackgroundLoop } from '../shared/background-loop.js';
import type { Db } from '../database.js';
import type { StoreHealth } from '../store/store-health.js';
import type { UsageDailyTable } from './api-key.table.js';
import { touchApiKeys } from './api-key.repository.js';
import { addUsage } from './usage.repository.js';

const FLUSH_INTERVAL_MS = 5_000;

type Slot = Pick<UsageDailyTable, 'customer_id' | 'day' | 'method' | 'route'>;
const slotOf = (s: Slot): string => `${s.customer_id}\n${s.day}\n${s.method}\n${s.route}`;

/**
 * Counts authenticated requests in memory and writes them in one batch every few seconds:
 * a write per request would cost more than the request it counts. Reads flush first, so a
 * node always reports its own requests exactly.
 */
export class UsageRecorder {
  private counts = new Map<string, UsageDailyTable>();
  private lastUsed = new Map<string, string>();
  private readonly flushing: BackgroundLoop;

  constructor(private readonly parts: { db: Db; health: StoreHealth }) {
    this.flushing = new BackgroundLoop(
      { what: 'usage flush', pass: () => this.write(), health: parts.health },
      { everyMs: FLUSH_INTERVAL_MS },
    );
  }

  start(): void {
    this.flushing.start();
  }

  record(customerId: string, keyId: string | null, method: string, route: string, failed: boolean, at: Date): void {
    const iso = at.toISOString();
    const day = iso.slice(0, 10);
    const fresh = { customer_id: customerId, day, method, route, requests: 0, errors: 0 };
    const slot = slotOf(fresh);
    let row = this.counts.get(slot);
    if (!row) {
      row = fresh;
      this.counts.set(slot, row);
    }
    row.requests += 1;
    if (failed) row.errors += 1;
    // A console session uses no key: its requests count, no key's last use moves.
    if (keyId) this.lastUsed.set(keyId, iso);
  }

  /** Writes what is pending; resolves once everything recorded before the call is written (or put back after a failure). */
  flush(): Promise<void> {
    return this.flushing.run();
  }

  async stop(): Promise<void> {
    await this.flushing.stop();
    await this.write();
  }

  private async write(): Promise<void> {
    if (this.counts.size === 0 && this.lastUsed.size === 0) return;
    const rows = [...this.counts.values()];
    const lastUsed = this.lastUsed;
    this.counts = new Map();
    this.lastUsed = new Map();
    try {
      await this.parts.db.transaction().execute(async (trx) => {
        await addUsage(trx, rows);
        await touchApiKeys(trx, lastUsed);
      });
    } catch (err) {
      // Counts are best-effort bookkeeping: put them back for the next flush rather than lose them.
      this.parts.health.failed(err, 'usage flush');
      for (const row of rows) {
        const slot = slotOf(row);
        const current = this.counts.get(slot);
        if (current) {
          current.requests += row.requests;
          current.errors += row.errors;
        } else this.counts.set(slot, row);
      }
      for (const [id, at] of lastUsed) if (!this.lastUsed.has(id)) this.lastUsed.set(id, at);
    }
  }
}

/** Counts each request that has a principal for its customer's usage, once it is answered. */
export function countUsage(usage: UsageRecorder): Middleware {
  return (req, res, next) => {
    const principal = res.locals.principal;
    if (principal)
      res.on('finish', () =>
        usage.record(
          principal.customerId,
          principal.keyId,
          req.method ?? '',
          routeLabelOf(req),
          res.statusCode >= 400,
          new Date(),
        ),
      );
    next();
  };
}
