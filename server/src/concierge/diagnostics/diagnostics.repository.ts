import type { Db } from '../../database.js';
import type { DeploymentDiagnosticTable } from './diagnostics.table.js';

type Counted = Pick<DeploymentDiagnosticTable, 'kind' | 'reason' | 'detail'>;
const detailKey = (row: Counted): string => `${row.kind}\n${row.reason}\n${row.detail}`;
/** The key a row is counted under: one row per deployment, day, kind, reason and detail. */
export const rowKey = (row: DeploymentDiagnosticTable): string => `${row.deployment_id}\n${row.day}\n${detailKey(row)}`;

/** Adds a row's count to the one of its key in `rows`, keeping the later `last_at`. */
export function addCount(rows: Map<string, DeploymentDiagnosticTable>, row: DeploymentDiagnosticTable): void {
  const known = rows.get(rowKey(row));
  if (!known) return void rows.set(rowKey(row), { ...row });
  known.count += row.count;
  if (row.last_at > known.last_at) known.last_at = row.last_at;
}

/**
 * Adds counts to the stored ones; a deployment deleted meanwhile keeps none. A deployment keeps at
 * most `distinctPerDay` distinct entries a day: what is new past them is added to one `other` entry of
 * its kind and reason, so made-up origins cost a count, never a row.
 */
export async function addDiagnostics(
  db: Db,
  rows: DeploymentDiagnosticTable[],
  limits: { distinctPerDay: number; other: string },
): Promise<void> {
  const existing = new Set(
    (
      await db
        .selectFrom('deployments')
        .select('id')
        .where('id', 'in', [...new Set(rows.map((r) => r.deployment_id))])
        .execute()
    ).map((d) => d.id),
  );
  const byDay = new Map<string, DeploymentDiagnosticTable[]>();
  for (const row of rows.filter((r) => existing.has(r.deployment_id))) {
    const day = `${row.deployment_id}\n${row.day}`;
    byDay.set(day, [...(byDay.get(day) ?? []), row]);
  }
  // Rows folded into `other` may come to share a key: one row per key in a statement.
  const merged = new Map<string, DeploymentDiagnosticTable>();
  for (const group of byDay.values()) {
    const { deployment_id, day } = group[0]!;
    const stored = new Set(
      (
        await db
          .selectFrom('deployment_diagnostics')
          .select(['kind', 'reason', 'detail'])
          .where('deployment_id', '=', deployment_id)
          .where('day', '=', day)
          .execute()
      ).map(detailKey),
    );
    for (const row of group) {
      if (!stored.has(detailKey(row)) && stored.size >= limits.distinctPerDay) row.detail = limits.other;
      stored.add(detailKey(row));
      addCount(merged, row);
    }
  }
  if (!merged.size) return;
  await db
    .insertInto('deployment_diagnostics')
    .values([...merged.values()])
    .onConflict((oc) =>
      oc.columns(['deployment_id', 'day', 'kind', 'reason', 'detail']).doUpdateSet((eb) => ({
        count: eb(eb.ref('deployment_diagnostics.count'), '+', eb.ref('excluded.count')),
        last_at: eb.ref('excluded.last_at'),
      })),
    )
    .execute();
}

export function diagnosticsSince(db: Db, deploymentId: string, day: string): Promise<DeploymentDiagnosticTable[]> {
  return db
    .selectFrom('deployment_diagnostics')
    .selectAll()
    .where('deployment_id', '=', deploymentId)
    .where('day', '>=', day)
    .execute();
}

/** Deletes the days before `day`: the diagnostics speak of the last 7 days only. */
export async function deleteDiagnosticsBefore(db: Db, day: string): Promise<number> {
  const result = await db.deleteFrom('deployment_diagnostics').where('day', '<', day).executeTakeFirst();
  return Number(result.numDeletedRows);
}
