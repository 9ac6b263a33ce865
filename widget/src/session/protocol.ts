/** The frames of contract section 5, as the widget sees them (types only: nothing reaches the bundle). */

export interface AgentInfo {
  name: string;
  greeting: string | null;
  language: string | null;
  voice: unknown;
}

export interface WidgetTheme {
  title?: string;
  accent_color?: string;
  position?: 'bottom-right' | 'bottom-left';
}

export type TurnMode = 'text' | 'voice';
export type FailReason = 'hook_rejected' | 'hook_failed' | 'reply_timeout' | 'conversation_ended';
export type EndReason = 'user_ended' | 'deployment_inactive' | 'max_turns';

export type ServerFrame =
  | { type: 'ready'; conversation_id: string; resumed: boolean; last_seq: number; token_expires_at: string; agent: AgentInfo; widget: WidgetTheme }
  | { type: 'error'; code: string; message: string }
  | { type: 'greeting'; seq: number; text: string }
  | { type: 'turn_accepted'; seq: number; turn_id: string; client_turn_id: string; text: string; mode: TurnMode }
  | { type: 'turn_acknowledged'; seq: number; turn_id: string }
  | { type: 'reply'; seq: number; turn_id: string; text: string }
  | { type: 'turn_failed'; seq: number; turn_id: string; reason: FailReason }
  | { type: 'conversation_ended'; seq: number; reason: EndReason }
  | { type: 'pong' };

export type ClientFrame =
  | { type: 'hello'; token: string; conversation_id?: string; last_seq?: number }
  | { type: 'user_turn'; client_turn_id: string; text: string; mode: TurnMode }
  | { type: 'refresh_token'; token: string }
  | { type: 'end' }
  | { type: 'ping' };

export const Close = {
  goingAway: 1001,
  protocol: 4400,
  badToken: 4401,
  forbidden: 4403,
  unknownConversation: 4404,
  ended: 4410,
  tooMany: 4429,
} as const;
