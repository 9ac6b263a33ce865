import { notFound } from '../../errors.js';
import type { Db } from '../../database.js';
import { findJob, findLatestJobForAgent, type JobRow } from './job.repository.js';
import type { Job } from './job.schemas.js';

export const pollingUrlOf = (jobId: string): string => `/api/v1/jobs/${jobId}/status`;

export function toJob(row: JobRow): Job {
  return {
    job_id: row.id,
    agent_id: row.agent_id,
    status: row.status,
    progress: row.progress,
    error: row.error,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export async function getJob(db: Db, customerId: string, jobId: string): Promise<Job> {
  const row = await findJob(db, customerId, jobId);
  if (!row) throw notFound('Job');
  return toJob(row);
}

export async function getLatestJobForAgent(db: Db, customerId: string, agentId: string): Promise<Job> {
  const row = await findLatestJobForAgent(db, customerId, agentId);
  if (!row) throw notFound('Generation job');
  return toJob(row);
}
