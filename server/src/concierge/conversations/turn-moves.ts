import { newId } from '../../shared/random.js';
import { isoIn, isoNow } from '../../shared/time.js';
import type { Tally } from '../analytics/tally.js';
import type { Change, ConversationAt, UnitOfWork } from '../events/event.recorder.js';
import type { TurnFailure, TurnStatus } from './conversation.table.js';
import { handoffEvent } from './handling.js';
import { type MovedTurn, transitionTurn, type TurnRow, type TurnScope } from './turn.repository.js';
import type { Reply, TurnInput } from './turn.types.js';
import type { ConversationRow } from './conversation.repository.js';
import type { Keeping } from '../privacy/keeping.js';

/**
 * A visitor's new turn as stored: `pending` for the hook, or, while a person handles the
 * conversation, acknowledged at once and due by the deployment's `person_reply_timeout_s`.
 */
export function newTurnRow(
  at: ConversationAt,
  conversation: ConversationRow,
  input: TurnInput,
  hookNode: string,
): TurnRow {
  const now = isoNow();
  const byPerson = conversation.handler === 'person';
  const turn: TurnRow = {
    id: newId(),
    conversation_id: conversation.id,
    client_turn_id: input.client_turn_id,
    text: input.text,
    kept: at.dep.privacy.keep,
    text_chars: [...input.text].length,
    reply_chars: null,
    guardrails: null,
    mode: input.mode,
    // The conversation's language unless the visitor chose another (README, The widget in your visitors' languages).
    language: input.language ?? at.dep.agent.language,
    status: byPerson ? 'acknowledged' : 'pending',
    delivery_id: newId(),
    reply_text: null,
    failure_reason: null,
    expires_at: byPerson ? isoIn(at.dep.person.replyTimeoutS * 1000) : null,
    acknowledged_at: byPerson ? now : null,
    resolved_at: null,
    reply_received_at: null,
    reply_duplicates: 0,
    first_part_at: null,
    part_chars: 0,
    reply_actions: null,
    replied_by: null,
    feedback_rating: null,
    feedback_comment: null,
    feedback_at: null,
    recognition_engine: input.recognition?.engine ?? null,
    recognition_ms: input.recognition?.durationMs ?? null,
    recognition_audio_ms: input.recognition?.audioMs ?? null,
    voice_speech_ms: input.handsFree?.speechMs ?? null,
    voice_end_of_turn_ms: input.handsFree?.endOfTurnMs ?? null,
    voice_first_audio_ms: null,
    heard_text: null,
    heard_interrupted: null,
    heard_at: null,
    knowledge: null,
    hook_node: byPerson ? null : hookNode,
    answering: 0,
    page_url: input.page?.url ?? null,
    page_title: input.page?.title ?? null,
    created_at: now,
    updated_at: now,
  };
  return turn;
}

/** A turn of the conversation `at` names, by its id: another conversation's turn of that id is none of it. */
export const turnScopeOf = (at: ConversationAt, turnId: string): TurnScope => ({
  turnId,
  conversationId: at.conversationId,
  deploymentId: at.dep.id,
});

/**
 * Moves a turn from one state to another, if it is still in the first (see turnLifecycle), and
 * records what the move tells and counts in the same unit of work; undefined when it was not.
 */
export async function move(
  unit: UnitOfWork,
  at: ConversationAt,
  turn: string | TurnScope,
  from: TurnStatus,
  to: TurnStatus,
  patch: Partial<TurnRow>,
  change: Change,
): Promise<MovedTurn | undefined> {
  const moved = await transitionTurn(unit.trx, turn, from, to, patch);
  if (!moved) return undefined;
  const { events, transcript, conversation } = change;
  await unit.record(at, { events, transcript, conversation, tally: { ...change.tally, ...tallyOf(moved) } });
  return moved;
}

/** What a turn's move counts: an answer, with how long it took; a failure, with its reason. */
function tallyOf(turn: MovedTurn): Tally {
  const after = (at: string | null) => (at ? Date.parse(at) - Date.parse(turn.created_at) : undefined);
  if (turn.status === 'resolved')
    return {
      at: turn.created_at,
      resolvedAfterMs: after(turn.resolved_at),
      firstPartAfterMs: after(turn.first_part_at),
    };
  if (turn.failure_reason) return { at: turn.created_at, failed: [turn.failure_reason] };
  return {};
}

/** What each move tells, to the widget and the transcript alike. */
export const told = {
  acknowledged: (turnId: string): Change => ({
    events: [{ type: 'turn_acknowledged', turn_id: turnId }],
    transcript: [{ type: 'turn.acknowledged', data: { turn_id: turnId } }],
  }),
  resolved: (turnId: string, { text, actions, by, handoff }: Reply): Change => ({
    events: [
      { type: 'reply', turn_id: turnId, text, actions, ...(by ? { name: by } : {}), ...(handoff ? { handoff } : {}) },
    ],
    transcript: [
      {
        type: 'turn.resolved',
        data: {
          turn_id: turnId,
          reply_text: text,
          actions,
          replied_by: by ? { type: 'person', name: by } : { type: 'agent' },
        },
      },
    ],
  }),
  /** The agent hands the conversation to a person: it needs one, for this reason (README, A person in the conversation). */
  handedOff: (reason: string): Change => ({
    events: [],
    transcript: [handoffEvent({ handler: 'agent', name: null, needs_person: true, reason })],
    conversation: { needs_person: 1, handoff_reason: reason, handoff_at: isoNow() },
    tally: { handoffs: 1 },
  }),
  failed: (turnId: string, reason: TurnFailure): Change => ({
    events: [{ type: 'turn_failed', turn_id: turnId, reason }],
    transcript: [{ type: 'turn.failed', data: { turn_id: turnId, reason } }],
  }),
};

/**
 * A reply as its turn keeps it: its words as the deployment keeps them, the actions as JSON text (none
 * as null), the person who wrote it (null for the agent).
 */
export const replyColumns = ({ text, actions, by }: Reply, keeping: Keeping) => ({
  reply_text: keeping.stored(text),
  reply_chars: [...text].length,
  reply_actions: actions.length ? JSON.stringify(actions) : null,
  replied_by: by ?? null,
});

/** A change that also hands the conversation to a person, for `reason`, in the same unit of work. */
export const withHandoff = (change: Change, reason: string): Change => {
  const handoff = told.handedOff(reason);
  return {
    ...joined(change, handoff),
    conversation: { ...change.conversation, ...handoff.conversation },
    tally: { ...change.tally, ...handoff.tally },
  };
};

/** Changes told as one, in order. */
export const joined = (...changes: Change[]): Change => ({
  events: changes.flatMap((c) => c.events),
  transcript: changes.flatMap((c) => c.transcript),
});
