import type { Conversation, Handler, StoredEvent } from './types';

/** A change of who handles a conversation, as the activity stream sends it (`event: handoff`). */
export interface Handoff {
  conversation_id: string;
  deployment_id: string;
  handler: Handler;
  name: string | null;
  needs_person: boolean;
  reason: string | null;
}

/** A stored widget event of one of the customer's conversations, as the activity stream sends it. */
export interface Activity {
  conversation_id: string;
  deployment_id: string;
  event: StoredEvent;
}

/** The inbox's order: those needing a person first, then those with turns waiting, then the most recently active. */
export function inboxOrder(conversations: readonly Conversation[]): Conversation[] {
  const rank = (c: Conversation) => (c.needs_person ? 0 : c.waiting_turns > 0 ? 1 : 2);
  return [...conversations].sort(
    (a, b) => rank(a) - rank(b) || b.last_activity_at.localeCompare(a.last_activity_at) || a.id.localeCompare(b.id),
  );
}

/** How long a request for a person has waited: minutes from 2 are long, from 5 late (the card says so in colour and words). */
export function personWait(
  c: Conversation,
  now: Date,
): { minutes: number; level: 'new' | 'long' | 'late' } | undefined {
  if (!c.needs_person || !c.handoff_at) return undefined;
  const minutes = Math.max(0, Math.floor((now.getTime() - Date.parse(c.handoff_at)) / 60_000));
  return { minutes, level: minutes >= 5 ? 'late' : minutes >= 2 ? 'long' : 'new' };
}

/** One line of a conversation's transcript, as a person in the inbox reads it. */
export interface Line {
  seq: number;
  who: 'visitor' | 'agent' | 'person' | 'notice';
  /** The person's name on a person's line. */
  name?: string;
  text: string;
  /** A reply still being written (its parts so far). */
  streaming?: boolean;
  /** The language the visitor asked in (BCP 47), on their lines. */
  language?: string;
}

const noticeOf = (event: StoredEvent): string | undefined => {
  switch (event.type) {
    case 'operator_joined':
      return `${event.name} joined the conversation`;
    case 'operator_left':
      return `${event.name} left the conversation`;
    case 'person_requested':
      return 'The visitor asked for a person';
    case 'still_waiting':
      return `The visitor was told nobody is free yet${event.text ? `: “${event.text}”` : ''}`;
    case 'turn_failed':
      return `The turn failed: ${event.reason.replaceAll('_', ' ')}`;
    case 'conversation_ended':
      return `The conversation ended: ${event.reason.replaceAll('_', ' ')}`;
    default:
      return undefined;
  }
};

/**
 * The transcript from the stored events, in `seq` order: what the visitor said, each reply by the
 * agent or a person (a streamed reply as its parts so far, until the final text replaces them),
 * a person's messages, and who joined or left.
 */
export function transcriptOf(events: readonly StoredEvent[]): Line[] {
  const lines: Line[] = [];
  const streamed = new Map<string, { line: Line; parts: Map<number, string> }>();
  for (const event of events) {
    switch (event.type) {
      case 'greeting':
        lines.push({ seq: event.seq, who: 'agent', text: event.text });
        break;
      case 'turn_accepted':
        lines.push({
          seq: event.seq,
          who: 'visitor',
          text: event.text,
          ...(event.language ? { language: event.language } : {}),
        });
        break;
      case 'reply_part': {
        let stream = streamed.get(event.turn_id);
        if (!stream) {
          stream = { line: { seq: event.seq, who: 'agent', text: '', streaming: true }, parts: new Map() };
          streamed.set(event.turn_id, stream);
          lines.push(stream.line);
        }
        stream.parts.set(event.part, event.text);
        stream.line.text = [...stream.parts.entries()]
          .sort(([a], [b]) => a - b)
          .map(([, text]) => text)
          .join('');
        break;
      }
      case 'reply': {
        const line: Line = event.name
          ? { seq: event.seq, who: 'person', name: event.name, text: event.text }
          : { seq: event.seq, who: 'agent', text: event.text };
        const stream = streamed.get(event.turn_id);
        if (stream) Object.assign(stream.line, line, { streaming: false });
        else lines.push(line);
        break;
      }
      case 'message':
        lines.push({ seq: event.seq, who: 'person', name: event.name, text: event.text });
        break;
      default: {
        const notice = noticeOf(event);
        if (notice) lines.push({ seq: event.seq, who: 'notice', text: notice });
      }
    }
  }
  return lines;
}

/** The turns acknowledged and not yet answered, oldest first, with what the visitor said. */
export function waitingTurnsOf(events: readonly StoredEvent[]): { turn_id: string; text: string }[] {
  const said = new Map<string, string>();
  const waiting = new Map<string, string>();
  for (const event of events) {
    if (event.type === 'turn_accepted') said.set(event.turn_id, event.text);
    else if (event.type === 'turn_acknowledged') waiting.set(event.turn_id, said.get(event.turn_id) ?? '');
    else if (event.type === 'reply' || event.type === 'turn_failed') waiting.delete(event.turn_id);
  }
  return [...waiting].map(([turn_id, text]) => ({ turn_id, text }));
}

/** `events` with `more` added: each `seq` once, in order (the stream may send an event twice after a resume). */
export function withEvents(events: readonly StoredEvent[], more: readonly StoredEvent[]): StoredEvent[] {
  const last = events.at(-1)?.seq ?? 0;
  const added = more.filter((e) => e.seq > last).sort((a, b) => a.seq - b.seq);
  return added.length ? [...events, ...added.filter((e, i) => i === 0 || e.seq !== added[i - 1]!.seq)] : [...events];
}
