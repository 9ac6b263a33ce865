import type { Db } from '../../database.js';
import type { JobStatus, JobTable } from './job.table.js';

export type JobRow = JobTable;

export async function insertJob(db: Db, row: JobRow): Promise<void> {
  await db.insertInto('jobs').values(row).execute();
}

export async function findJob(db: Db, customerId: string, id: string): Promise<JobRow | undefined> {
  return db
    .selectFrom('jobs')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function findLatestJobForAgent(db: Db, customerId: string, agentId: string): Promise<JobRow | undefined> {
  return db
    .selectFrom('jobs')
    .selectAll()
    .where('customer_id', '=', customerId)
    .where('agent_id', '=', agentId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst();
}

/** Queued jobs, and running ones whose worker stopped renewing its lease. */
export async function findClaimableJobs(db: Db, now: string, limit: number): Promise<JobRow[]> {
  return db
    .selectFrom('jobs')
    .selectAll()
    .where((eb) =>
      eb.or([eb('status', '=', 'queued'), eb.and([eb('status', '=', 'running'), eb('lease_expires_at', '<', now)])]),
    )
    .orderBy('created_at')
    .limit(limit)
    .execute();
}

/**
 * Compare-and-set on the row as it was read: of several nodes racing for one job, exactly one
 * update matches. Works the same on SQLite and PostgreSQL.
 */
export async function claimJob(db: Db, seen: JobRow, leaseUntil: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('jobs')
    .set({ status: 'running', attempts: seen.attempts + 1, lease_expires_at: leaseUntil, updated_at: now })
    .where('id', '=', seen.id)
    .where('status', '=', seen.status)
    .where('attempts', '=', seen.attempts)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function updateJob(
  db: Db,
  id: string,
  patch: Partial<Pick<JobRow, 'status' | 'progress' | 'error' | 'lease_expires_at'>> & { updated_at: string },
): Promise<void> {
  await db.updateTable('jobs').set(patch).where('id', '=', id).execute();
}

/** Hands running jobs back to the queue at shutdown so the next start picks them up at once. */
export async function releaseJobs(db: Db, ids: string[], now: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('jobs')
    // A stop we chose is not a failed attempt: give the attempt back.
    .set((eb) => ({
      status: 'queued' satisfies JobStatus,
      attempts: eb('attempts', '-', 1),
      lease_expires_at: null,
      updated_at: now,
    }))
    .where('id', 'in', ids)
    .where('status', '=', 'running')
    .execute();
}

export async function deleteJobsOfAgent(db: Db, agentId: string): Promise<void> {
  await db.deleteFrom('jobs').where('agent_id', '=', agentId).execute();
}
