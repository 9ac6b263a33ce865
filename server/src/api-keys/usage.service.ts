import type { Db } from '../database.js';
import type { Usage } from './api-key.schemas.js';
import { usageSince } from './usage.repository.js';

const DAY_MS = 86_400_000;

/** The last `days` UTC days including today, every day present (zeros included). */
export async function getUsage(db: Db, customerId: string, days: number, now = new Date()): Promise<Usage> {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const start = new Date(today - (days - 1) * DAY_MS);
  const firstDay = start.toISOString().slice(0, 10);
  const rows = await usageSince(db, customerId, firstDay);

  const daily = new Map<string, { date: string; requests: number; errors: number }>();
  for (let i = 0; i < days; i++) {
    const date = new Date(start.getTime() + i * DAY_MS).toISOString().slice(0, 10);
    daily.set(date, { date, requests: 0, errors: 0 });
  }
  const byRoute = new Map<string, { method: string; route: string; requests: number }>();
  let totalRequests = 0;
  let totalErrors = 0;
  for (const row of rows) {
    const day = daily.get(row.day);
    if (!day) continue;
    day.requests += row.requests;
    day.errors += row.errors;
    totalRequests += row.requests;
    totalErrors += row.errors;
    const key = `${row.method} ${row.route}`;
    const entry = byRoute.get(key) ?? { method: row.method, route: row.route, requests: 0 };
    entry.requests += row.requests;
    byRoute.set(key, entry);
  }
  return {
    period_start: start.toISOString(),
    period_end: now.toISOString(),
    total_requests: totalRequests,
    total_errors: totalErrors,
    daily: [...daily.values()],
    by_route: [...byRoute.values()].sort(
      (a, b) => b.requests - a.requests || a.route.localeCompare(b.route) || a.method.localeCompare(b.method),
    ),
  };
}
