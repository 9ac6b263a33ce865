import type { EndReason, TurnFailure, TurnMode } from '../protocol/frames.js';

export type { EndReason, TurnFailure, TurnMode };
export type ConversationStatus = 'open' | 'ended';
export type TurnStatus = 'pending' | 'acknowledged' | 'resolved' | 'failed' | 'expired';

export interface ConversationTable {
  id: string;
  deployment_id: string;
  user_sub: string;
  user_name: string | null;
  /** JSON text of the token's `ctx` claim, passed to the hook. */
  user_ctx: string | null;
  status: ConversationStatus;
  /** The agent version the conversation started with, kept whatever its deployment is pinned to later. */
  agent_version: number | null;
  last_seq: number;
  turn_count: number;
  created_at: string;
  updated_at: string;
}

export interface TurnTable {
  id: string;
  conversation_id: string;
  client_turn_id: string;
  text: string;
  mode: TurnMode;
  status: TurnStatus;
  delivery_id: string;
  reply_text: string | null;
  failure_reason: TurnFailure | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}
