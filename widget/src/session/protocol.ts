/**
 * The frames of README, Concierge sessions, from the server's own protocol module: the types come in with
 * `import type` (nothing reaches the bundle), the close codes from a table with no imports.
 */
export type { AgentInfo, ClientMessage as ClientFrame, EndReason, ServerFrame, TurnFailure as FailReason, TurnMode } from '../../../server/src/concierge/protocol/frames';
export { Close } from '../../../server/src/concierge/protocol/close-codes';

/** The widget's theme, from the deployment's `channel_config.widget` (sent in `ready`). */
export interface WidgetTheme {
  title?: string;
  accent_color?: string;
  position?: 'bottom-right' | 'bottom-left';
}
