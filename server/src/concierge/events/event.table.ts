import type { StoredEvent } from '#protocol/frames';

/** One stored widget event of a conversation, `frame` being the exact JSON text sent. */
export interface ConversationEventTable {
  conversation_id: string;
  seq: number;
  type: StoredEvent['type'];
  frame: string;
  created_at: string;
}
