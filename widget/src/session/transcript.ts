import type {
  AgentInfo,
  EndReason,
  FeedbackRating,
  RecognitionSite,
  ReplyAction,
  SynthesisSite,
  ServerFrame,
  TurnMode,
  VoiceMode,
  WidgetTheme,
} from './protocol';
import { streamedText } from '#protocol/sentences';

export type Status = 'connecting' | 'open' | 'reconnecting' | 'offline' | 'ended';
/** Why the conversation is over: its own end, or the service refusing this widget on this page. */
export type Ending = EndReason | 'origin_not_allowed' | 'unknown_deployment';
/** A visitor's turn: `answering` while its reply streams in. */
export type LineState = 'sending' | 'sent' | 'thinking' | 'answering' | 'answered' | 'failed';

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
  /** An agent's reply while it streams: the parts so far, by number (a gap waits for its part). */
  parts?: string[];
  /** What the reply offers beside its text, once it is final. */
  actions?: ReplyAction[];
  /** The person who wrote it, when not the agent; on a note, the person who joined or left. */
  name?: string;
  /**
   * A note about the conversation itself: a person joined or left, the visitor asked for one,
   * nobody has come yet (its `text` the customer's words, else the widget's own).
   */
  note?: 'joined' | 'left' | 'requested' | 'still_waiting';
  /** On a reply: the visitor's rating of it. */
  rating?: FeedbackRating;
  /** On a reply: it handed the conversation to a person, a notice not to rate. */
  handoff?: true | undefined;
}

export interface View {
  status: Status;
  agent: AgentInfo | undefined;
  theme: WidgetTheme;
  /** The deployment's look is known (`ready` said it, now or on the tab's last page): until then the launcher waits unseen. */
  styled: boolean;
  /** Where the visitor's speech is recognised, as `ready` said (README, Voice in every browser). */
  recognition: RecognitionSite | undefined;
  /** Where speech goes when the browser's own recognition fails here: the service's, when `ready` offered it. */
  recognitionFallback?: 'service' | undefined;
  /** Whose voice reads replies out, as `ready` said (README, The agent's own voice). */
  synthesis?: SynthesisSite;
  /** The deployment takes text only: no microphone is shown. */
  textOnly?: boolean;
  /** How the visitor talks, as `ready` said (README, Hands-free voice). */
  voiceMode?: VoiceMode;
  /** The person handling the conversation, by the name the visitor sees, while one does. */
  person?: string;
  lines: Line[];
  ended: Ending | undefined;
}

export const emptyView = (): View => ({
  status: 'connecting',
  agent: undefined,
  theme: {},
  styled: false,
  recognition: undefined,
  lines: [],
  ended: undefined,
});

const patchTurn = (lines: Line[], match: (l: Line) => boolean, patch: Partial<Line>): Line[] =>
  lines.map((l) => (match(l) ? { ...l, ...patch } : l));

/** The key of a turn's reply line: the same while it streams and once final, so the final text replaces the parts in place. */
export const replyKey = (turnId: string): string => `r${turnId}`;

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
        : {
            ...view,
            lines: [
              ...lines,
              {
                key: frame.client_turn_id,
                who: 'user',
                text: frame.text,
                mode: frame.mode,
                clientTurnId: frame.client_turn_id,
                ...accepted,
              },
            ],
          };
    }
    case 'turn_acknowledged':
      return {
        ...view,
        lines: patchTurn(lines, (l) => l.turnId === frame.turn_id && l.state === 'sent', { state: 'thinking' }),
      };
    case 'reply_part':
    case 'reply': {
      const key = replyKey(frame.turn_id);
      const shown = lines.find((l) => l.key === key);
      const line: Line = { key, who: 'agent', text: frame.text, turnId: frame.turn_id };
      if (frame.type === 'reply')
        Object.assign(line, { actions: frame.actions ?? [], name: frame.name, handoff: frame.handoff });
      // A part after the final reply (never sent, but a replay must not undo it) changes nothing.
      else if (shown && !shown.parts) return view;
      else {
        line.parts = Object.assign([...(shown?.parts ?? [])], { [frame.part]: frame.text });
        line.text = streamedText(line.parts);
      }
      const asked = patchTurn(lines, (l) => l.turnId === frame.turn_id && l.who === 'user' && l.state !== 'failed', {
        state: line.parts ? 'answering' : 'answered',
      });
      return { ...view, lines: shown ? asked.map((l) => (l === shown ? line : l)) : [...asked, line] };
    }
    case 'feedback_recorded':
      return { ...view, lines: patchTurn(lines, (l) => l.key === replyKey(frame.turn_id), { rating: frame.rating }) };
    case 'turn_failed':
      return {
        ...view,
        lines: patchTurn(lines, (l) => l.turnId === frame.turn_id && l.who === 'user', {
          state: 'failed',
          reason: frame.reason,
        }),
      };
    case 'message':
      return {
        ...view,
        lines: [
          ...lines,
          { key: `s${frame.seq}`, who: 'agent', text: frame.text, actions: frame.actions, name: frame.name },
        ],
      };
    case 'operator_joined':
    case 'operator_left':
      return {
        ...view,
        person: frame.type === 'operator_joined' ? frame.name : undefined,
        lines: [
          ...lines,
          {
            key: `s${frame.seq}`,
            who: 'agent',
            text: '',
            name: frame.name,
            note: frame.type === 'operator_joined' ? 'joined' : 'left',
          },
        ],
      };
    case 'person_requested':
      return { ...view, lines: [...lines, { key: `s${frame.seq}`, who: 'agent', text: '', note: 'requested' }] };
    case 'still_waiting':
      return {
        ...view,
        lines: [...lines, { key: `s${frame.seq}`, who: 'agent', text: frame.text ?? '', note: 'still_waiting' }],
      };
    case 'reengaged':
      return { ...view, lines: [...lines, { key: `s${frame.seq}`, who: 'agent', text: frame.text }] };
    case 'conversation_ended':
      return { ...view, status: 'ended', ended: frame.reason };
    default:
      return view;
  }
}
