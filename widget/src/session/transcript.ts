import type { AgentInfo, EndReason, ServerFrame, TurnMode, WidgetTheme } from './protocol';

export type Status = 'connecting' | 'open' | 'reconnecting' | 'offline' | 'ended';
export type LineState = 'sending' | 'sent' | 'thinking' | 'answered' | 'failed';

export interface Line {
  key: string;
  who: 'user' | 'agent';
  text: string;
  mode?: TurnMode;
  clientTurnId?: string;
  turnId?: string;
  state?: LineState;
  /** Why a turn failed: a `turn_failed` reason or an `error` code. */
  reason?: string;
}

export interface View {
  status: Status;
  agent: AgentInfo | undefined;
  theme: WidgetTheme;
  lines: Line[];
  ended: EndReason | undefined;
}

export const emptyView = (): View => ({ status: 'connecting', agent: undefined, theme: {}, lines: [], ended: undefined });

const patchTurn = (lines: Line[], match: (l: Line) => boolean, patch: Partial<Line>): Line[] => lines.map((l) => (match(l) ? { ...l, ...patch } : l));

/** The transcript after one stored event: a pure step, so a replay rebuilds exactly what was shown. */
export function applyEvent(view: View, frame: ServerFrame): View {
  const { lines } = view;
  switch (frame.type) {
    case 'greeting':
      return { ...view, lines: [...lines, { key: `s${frame.seq}`, who: 'agent', text: frame.text }] };
    case 'turn_accepted': {
      const mine = lines.some((l) => l.clientTurnId === frame.client_turn_id);
      const accepted = { turnId: frame.turn_id, state: 'sent' as const };
      return mine
        ? { ...view, lines: patchTurn(lines, (l) => l.clientTurnId === frame.client_turn_id, accepted) }
        : { ...view, lines: [...lines, { key: frame.client_turn_id, who: 'user', text: frame.text, mode: frame.mode, clientTurnId: frame.client_turn_id, ...accepted }] };
    }
    case 'turn_acknowledged':
      return { ...view, lines: patchTurn(lines, (l) => l.turnId === frame.turn_id && l.state === 'sent', { state: 'thinking' }) };
    case 'reply':
      return {
        ...view,
        lines: [...patchTurn(lines, (l) => l.turnId === frame.turn_id, { state: 'answered' }), { key: `s${frame.seq}`, who: 'agent', text: frame.text, turnId: frame.turn_id }],
      };
    case 'turn_failed':
      return { ...view, lines: patchTurn(lines, (l) => l.turnId === frame.turn_id && l.who === 'user', { state: 'failed', reason: frame.reason }) };
    case 'conversation_ended':
      return { ...view, status: 'ended', ended: frame.reason };
    default:
      return view;
  }
}
