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
  /**
   * 1 for the conversation's next pending event, the only one that may be sent: delivery claims
   * heads through an index of their own, so a conversation with a long backlog costs no more to
   * look past than any other. Kept under the conversation's row lock (see outbox.repository).
   */
  is_head: 0 | 1;
}
