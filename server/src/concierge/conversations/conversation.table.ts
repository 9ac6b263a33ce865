import type { EndReason, FeedbackRating, Handler, RecognitionEngine, TurnFailure, TurnMode } from '#protocol/frames';
import type { KeepMode } from '#protocol/privacy';

export type { EndReason, Handler, TurnFailure, TurnMode };
export const conversationStatuses = ['open', 'ended'] as const;
export type ConversationStatus = (typeof conversationStatuses)[number];
export const turnStatuses = ['pending', 'acknowledged', 'resolved', 'failed', 'expired'] as const;
export type TurnStatus = (typeof turnStatuses)[number];

export interface ConversationTable {
  id: string;
  /** Its deployment's customer and agent, kept on the row so the history lists without joins. */
  customer_id: string;
  deployment_id: string;
  agent_id: string;
  user_sub: string;
  user_name: string | null;
  /** JSON text of the token's `ctx` claim, passed to the hook. */
  user_ctx: string | null;
  status: ConversationStatus;
  end_reason: EndReason | null;
  ended_at: string | null;
  /** The agent version the conversation started with, kept whatever its deployment is pinned to later. */
  agent_version: number | null;
  last_seq: number;
  turn_count: number;
  /** Who answers its turns: the turn hook, or a person (README, A person in the conversation), by the name visitors see. */
  handler: Handler;
  handler_name: string | null;
  /** 1 once the hook handed it over, until someone takes it; with the hook's reason. */
  needs_person: 0 | 1;
  handoff_reason: string | null;
  /** When who handles it, or whether it needs a person, last changed. */
  handoff_at: string | null;
  /** 1 when a preview token (`preview: true`, the console's Try it) started it: kept out of the inbox. */
  preview: 0 | 1;
  /** When the visitor waiting for a person was last told nobody has come yet. */
  wait_told_at: string | null;
  /** JSON text of the page's context (`Concierge.setContext`, README, Greeting visitors first), passed to the hook. */
  page_context: string | null;
  /** The greeting rule that approached the visitor before their first turn: its turns count for it. */
  proactive_rule: string | null;
  /** When the page last sent an event; null until it does, and a turn's responder is told none without a read. */
  page_event_at: string | null;
  /**
   * JSON `{tool, args, turn_id}`: a call of a tool that needs the visitor's word (`confirm`), as the
   * model proposed it in that turn; it runs when the model makes it again in a later turn.
   */
  tool_confirmation: string | null;
  /** The agent test run it belongs to (README, Tests and analysis), and JSON of the tool answers that run mocks; null for a visitor's. */
  test_run_id: string | null;
  test_mocks: string | null;
  created_at: string;
  updated_at: string;
}

export interface TurnTable {
  id: string;
  conversation_id: string;
  client_turn_id: string;
  /** What was said as its deployment keeps it (README, Privacy: what is kept): as said, redacted, or empty. */
  text: string;
  /** How its words were kept (null: before it was recorded, every word), and how many characters were said and replied. */
  kept: KeepMode | null;
  text_chars: number | null;
  reply_chars: number | null;
  /** What the agent's guardrails decided about its reply, as JSON (README, Variables and guardrails); null: nothing. */
  guardrails: string | null;
  mode: TurnMode;
  /** The visitor's language for this turn (BCP 47); null for turns taken before it was recorded. */
  language: string | null;
  status: TurnStatus;
  delivery_id: string;
  reply_text: string | null;
  failure_reason: TurnFailure | null;
  expires_at: string | null;
  acknowledged_at: string | null;
  resolved_at: string | null;
  /** When the deferred reply came (null for a reply in the hook's answer), and how many identical copies followed it. */
  reply_received_at: string | null;
  reply_duplicates: number;
  /** When the reply's first part came (README, Streaming a reply), and the characters (code points) its parts hold together. */
  first_part_at: string | null;
  part_chars: number;
  /** JSON text of the reply's actions; null when it had none. */
  reply_actions: string | null;
  /** The name of the person who answered; null when the agent did, or nobody has yet. */
  replied_by: string | null;
  /** The visitor's last rating of the reply, its comment, and when (README, Knowing how it goes). */
  feedback_rating: FeedbackRating | null;
  feedback_comment: string | null;
  feedback_at: string | null;
  /** A spoken turn the service recognised (README, Voice in every browser): engine, recogniser's time, audio length; null otherwise. */
  recognition_engine: RecognitionEngine | null;
  recognition_ms: number | null;
  recognition_audio_ms: number | null;
  /** A hands-free turn (README, Hands-free voice): its speech, the quiet that ended it, and from its end to the reply's first audio; null otherwise. */
  voice_speech_ms: number | null;
  voice_end_of_turn_ms: number | null;
  voice_first_audio_ms: number | null;
  /** What the visitor heard of the spoken reply (README, The agent's own voice); null when it was not spoken, or not reported. */
  heard_text: string | null;
  heard_interrupted: number | null;
  heard_at: string | null;
  /** JSON of the knowledge base passages the turn was given (README, Answers from your documents): `[{chunk_id, document_id, title, url, score}]`; null when none. */
  knowledge: string | null;
  /** The node that calls (or called) the turn's hook (see `service_nodes`); null for a turn no hook is called for. */
  hook_node: string | null;
  /** 1 while `hook_node` answers the acknowledged turn itself (a model's reply): taken over if that node goes silent. */
  answering: number;
  /** The page the turn was taken on (README, Greeting visitors first); null when the widget did not say. */
  page_url: string | null;
  page_title: string | null;
  created_at: string;
  updated_at: string;
}

/** One part of a reply as it arrived. */
export interface ReplyPartTable {
  turn_id: string;
  part: number;
  text: string;
  received_at: string;
}
