import type { Db } from '../../store/database.js';
import type { DeploymentDiagnosticTable } from './diagnostics.table.js';

/** Adds counts to the stored ones; a deployment deleted meanwhile keeps none. */
export async function addDiagnostics(db: Db, rows: DeploymentDiagnosticTable[]): Promise<void> {
  const existing = new Set((await db.selectFrom('deployments').select('id').where('id', 'in', [...new Set(rows.map((r) => r.deployment_id))]).execute()).map((d) => d.id));
  const kept = rows.filter((r) => existing.has(r.deployment_id));
  if (!kept.length) return;
  await db
    .insertInto('deployment_diagnostics')
    .values(kept)
    .onConflict((oc) =>
      oc.columns(['deployment_id', 'day', 'kind', 'reason', 'detail']).doUpdateSet((eb) => ({ count: eb(eb.ref('deployment_diagnostics.count'), '+', eb.ref('excluded.count')), last_at: eb.ref('excluded.last_at') })),
    )
    .execute();
}

export function diagnosticsSince(db: Db, deploymentId: string, day: string): Promise<DeploymentDiagnosticTable[]> {
  return db.selectFrom('deployment_diagnostics').selectAll().where('deployment_id', '=', deploymentId).where('day', '>=', day).execute();
}
