/** Transcript events waiting for (or done with) delivery to the customer's transcript hook. */
export type OutboxStatus = 'pending' | 'delivered' | 'dead';

export interface TranscriptOutboxTable {
  id: string;
  deployment_id: string;
  conversation_id: string;
  position: number;
  body: string;
  status: OutboxStatus;
  attempts: number;
  next_attempt_at: string;
  lease_expires_at: string | null;
  created_at: string;
}
