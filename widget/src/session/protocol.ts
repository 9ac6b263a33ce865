/**
 * The frames of README, Concierge sessions, from the server's own protocol module: the types come in with
 * `import type` (nothing reaches the bundle), the close codes from a table with no imports.
 */
export type {
  AgentInfo,
  AgentVoice,
  ClientMessage as ClientFrame,
  EndReason,
  FeedbackRating,
  Pronunciation,
  RecognitionSite,
  ServerFrame,
  SynthesisSite,
  ReplyAction,
  TurnFailure as FailReason,
  TurnMode,
  VoiceMode,
  WidgetTheme,
} from '#protocol/frames';
export { Close, CloseReason } from '#protocol/close-codes';
