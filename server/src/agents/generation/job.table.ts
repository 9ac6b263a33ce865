export type JobStatus = 'queued' | 'running' | 'succeeded' | 'failed';

export interface JobTable {
  id: string;
  customer_id: string;
  agent_id: string;
  kind: string;
  status: JobStatus;
  progress: number;
  error: string | null;
  attempts: number;
  /** A running job whose lease has passed belongs to a dead worker and is taken over. */
  lease_expires_at: string | null;
  created_at: string;
  updated_at: string;
}
