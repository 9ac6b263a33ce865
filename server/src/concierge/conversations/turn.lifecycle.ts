import { isoNow } from '../../shared/time.js';
import type { Change, ConversationAt, UnitOfWork } from '../events/event.recorder.js';
import type { Heard } from './heard.js';
import { REPLY_PART_LIMITS } from '#protocol/frames';
import type { Answer } from './answer.js';
import type { ConversationRow } from './conversation.repository.js';
import type { TurnFailure, TurnStatus } from './conversation.table.js';
import {
  addReplyPart,
  countDuplicateReply,
  failOpenTurns,
  findReplyPart,
  insertTurn,
  lockTurnOf,
  type MovedTurn,
  OPEN_TURN_STATUSES,
  rateTurn,
  type TurnRow,
  type TurnScope,
} from './turn.repository.js';
import { setFirstAudio, setHeard } from './turn-voice.repository.js';
import { joined, move, newTurnRow, replyColumns, told, turnScopeOf, withHandoff } from './turn-moves.js';
import type { Feedback, Reply, ReplyPart, ReplyTaken, TurnInput } from './turn.types.js';

/**
 * A turn's life, in one place: the states it moves through, and what each move tells the widget
 * and the transcript, stored in the same unit of work as the move.
 *
 *     pending ──hook 2xx──────────▶ acknowledged ──signed reply, or a person's──▶ resolved
 *        │                           ↺ reply parts (each restarts the reply timeout)
 *        │  └─hook 2xx + reply_text ─────────────────────────────▶ resolved
 *        ├─hook 4xx / failed / cut off / stale ──▶ failed
 *        │                       acknowledged ──reply timeout──▶ expired
 *        │                       acknowledged ──the agent's model gave no answer──▶ failed (model_failed)
 *        └─(pending or acknowledged) conversation ends ──▶ failed (conversation_ended)
 *
 * While a person handles the conversation a turn is taken acknowledged (no hook call), due by the
 * deployment's `person_reply_timeout_s`.
 *
 * A move happens only if the turn is still in the state it moves from: of two racing writers (a
 * reply and the expiry sweep, say) exactly one wins, and only the winner tells anything.
 */
export const turnLifecycle = {
  /**
   * A new turn, stored with its `turn_accepted` and counted against the conversation's turns:
   * `pending` for the hook, or, while a person handles the conversation, acknowledged at once.
   */
  async take(
    unit: UnitOfWork,
    at: ConversationAt,
    conversation: ConversationRow,
    input: TurnInput,
    hookNode: string,
  ): Promise<TurnRow> {
    const byPerson = conversation.handler === 'person';
    const turn = newTurnRow(at, conversation, input, hookNode);
    // Stored as the deployment keeps it; whoever answers gets it as said.
    await insertTurn(unit.trx, { ...turn, text: unit.keeping(at, turn.language!).stored(turn.text) });
    const accepted = {
      turn_id: turn.id,
      client_turn_id: turn.client_turn_id,
      text: turn.text,
      mode: turn.mode,
      language: turn.language!,
    };
    const taken = joined(
      { events: [{ type: 'turn_accepted', ...accepted }], transcript: [{ type: 'turn.created', data: accepted }] },
      ...(byPerson ? [told.acknowledged(turn.id)] : []),
    );
    await unit.record(at, {
      ...taken,
      conversation: { turn_count: conversation.turn_count + 1 },
      tally: {
        turns: 1,
        ...(input.recognition ? { recognitionMs: input.recognition.durationMs } : {}),
        // A conversation a greeting rule opened counts for it (README, Greeting visitors first).
        ...(conversation.proactive_rule
          ? {
              proactive: {
                rule: conversation.proactive_rule,
                turns: 1,
                conversations: conversation.turn_count === 0 ? 1 : 0,
              },
            }
          : {}),
      },
    });
    return turn;
  },

  /**
   * An answer moves a turn on from `from`: a pending one (the hook called, a knowledge base read)
   * or one acknowledged by whoever writes its reply (a model). A reply resolves it, a promise of one
   * acknowledges it (its reply due by `replyDueAt`), a failure fails it; a handoff in the answer marks
   * the conversation as needing a person, in the same change, after the reply. `kept`: what the
   * turn keeps beside, written with the move (a statement fewer than after it).
   */
  answer(
    unit: UnitOfWork,
    at: ConversationAt,
    turnId: string,
    from: 'pending' | 'acknowledged',
    answer: Answer,
    replyDueAt: string,
    kept: Partial<Pick<TurnRow, 'knowledge' | 'answering' | 'guardrails'>> = {},
  ): Promise<MovedTurn | undefined> {
    const now = isoNow();
    const handoff = (change: Change): Change =>
      answer.kind === 'failed' || answer.handoff === undefined ? change : withHandoff(change, answer.handoff);
    if (answer.kind === 'failed')
      return move(
        unit,
        at,
        turnId,
        from,
        'failed',
        { failure_reason: answer.reason, ...kept },
        told.failed(turnId, answer.reason),
      );
    if (answer.kind === 'acknowledged')
      return from === 'pending'
        ? move(
            unit,
            at,
            turnId,
            'pending',
            'acknowledged',
            { expires_at: replyDueAt, acknowledged_at: now, ...kept },
            handoff(told.acknowledged(turnId)),
          )
        : Promise.resolve(undefined);
    const reply: Reply = {
      text: answer.text,
      actions: answer.actions,
      ...(answer.handoff === undefined ? {} : { handoff: true as const }),
    };
    const resolved = told.resolved(turnId, reply);
    return from === 'pending'
      ? move(
          unit,
          at,
          turnId,
          'pending',
          'resolved',
          { acknowledged_at: now, resolved_at: now, ...replyColumns(reply, unit.keeping(at)), ...kept },
          handoff(joined(told.acknowledged(turnId), resolved)),
        )
      : move(
          unit,
          at,
          turnId,
          'acknowledged',
          'resolved',
          { resolved_at: now, reply_received_at: now, ...replyColumns(reply, unit.keeping(at)), ...kept },
          handoff(resolved),
        );
  },

  /**
   * The customer's signed deferred reply resolves an acknowledged turn of this conversation of this
   * deployment. Otherwise says why not: an identical repeat of the reply that resolved it is a
   * `duplicate` (counted, for the history).
   */
  async resolve(unit: UnitOfWork, at: ConversationAt, scope: TurnScope, reply: Reply): Promise<ReplyTaken> {
    const now = isoNow();
    const columns = replyColumns(reply, unit.keeping(at));
    if (
      await move(
        unit,
        at,
        scope,
        'acknowledged',
        'resolved',
        { resolved_at: now, reply_received_at: now, ...columns },
        told.resolved(scope.turnId, reply),
      )
    )
      return 'stored';
    const turn = await lockTurnOf(unit.trx, scope, unit.dialect);
    if (!turn) return 'not_found';
    // Acknowledged since the attempt (its answer committed meanwhile): as if still pending, so the caller tries again.
    if (turn.status === 'acknowledged') return 'pending';
    const same =
      turn.reply_text === columns.reply_text &&
      turn.reply_actions === columns.reply_actions &&
      turn.replied_by === columns.replied_by;
    if (turn.status !== 'resolved' || !same) return turn.status;
    await countDuplicateReply(unit.trx, turn.id);
    return 'duplicate';
  },

  /**
   * A part of an acknowledged turn's reply, as it is written: stored and told to the widget (not
   * the transcript, whose `turn.resolved` carries the whole reply), and the reply is due
   * `replyDueAt` from now on. An identical repeat of a stored part is a `duplicate` whatever the
   * turn's state since; its number with other text, a `conflict`.
   */
  async part(
    unit: UnitOfWork,
    at: ConversationAt,
    scope: TurnScope,
    part: ReplyPart,
    replyDueAt: string,
  ): Promise<ReplyTaken> {
    const turn = await lockTurnOf(unit.trx, scope, unit.dialect);
    if (!turn) return 'not_found';
    const text = unit.keeping(at).stored(part.text);
    const known = await findReplyPart(unit.trx, turn.id, part.part);
    if (known) return known.text === text ? 'duplicate' : 'conflict';
    if (turn.status !== 'acknowledged') return turn.status;
    const chars = [...part.text].length;
    if (turn.part_chars + chars > REPLY_PART_LIMITS.chars) return 'too_long';
    await addReplyPart(unit.trx, { turn_id: turn.id, part: part.part, text, received_at: isoNow() }, chars, replyDueAt);
    await unit.record(at, { events: [{ type: 'reply_part', turn_id: turn.id, ...part }], transcript: [] });
    return 'stored';
  },

  /**
   * The visitor rates a turn's reply (README, Knowing how it goes): the last rating counts, a
   * comment with it or not. Only a turn of this conversation that has its reply can be rated.
   */
  async rate(
    unit: UnitOfWork,
    at: ConversationAt,
    turnId: string,
    feedback: Feedback,
  ): Promise<'stored' | 'not_found' | 'not_answered'> {
    const turn = await lockTurnOf(unit.trx, turnScopeOf(at, turnId), unit.dialect);
    if (!turn) return 'not_found';
    if (turn.status !== 'resolved') return 'not_answered';
    const comment = feedback.comment ?? null;
    await rateTurn(unit.trx, turnId, {
      feedback_rating: feedback.rating,
      feedback_comment: unit.keeping(at).stored(comment),
      feedback_at: isoNow(),
    });
    await unit.record(at, {
      events: [{ type: 'feedback_recorded', turn_id: turnId, rating: feedback.rating }],
      transcript: [{ type: 'turn.rated', data: { turn_id: turnId, rating: feedback.rating, comment } }],
      tally: { at: turn.created_at, feedback: { rating: feedback.rating, previous: turn.feedback_rating } },
    });
    return 'stored';
  },

  /**
   * What the visitor heard of a turn's spoken reply (README, The agent's own voice): kept as the
   * widget reports it, sentence by sentence. The first report of an interruption tells the
   * transcript hook (`turn.interrupted`); a later one of the same reply changes only what is kept.
   */
  async heard(unit: UnitOfWork, at: ConversationAt, turnId: string, heard: Heard): Promise<boolean> {
    const turn = await lockTurnOf(unit.trx, turnScopeOf(at, turnId), unit.dialect);
    if (!turn) return false;
    await setHeard(unit.trx, turnId, {
      heard_text: unit.keeping(at).stored(heard.text),
      heard_interrupted: heard.interrupted ? 1 : 0,
      heard_at: isoNow(),
    });
    if (heard.interrupted && turn.heard_interrupted !== 1)
      await unit.record(at, {
        events: [],
        transcript: [{ type: 'turn.interrupted', data: { turn_id: turnId, heard_text: heard.text } }],
      });
    return true;
  },

  /** The first audio of a hands-free turn's reply went out `ms` after the visitor stopped speaking: kept, and counted once. */
  async firstAudio(unit: UnitOfWork, at: ConversationAt, turnId: string, ms: number): Promise<void> {
    if (await setFirstAudio(unit.trx, turnScopeOf(at, turnId), ms)) unit.count(at, { voiceToVoiceMs: ms });
  },

  /**
   * A turn whose time is up: an acknowledged one's reply timeout passed (`expired`), or a pending
   * one's hook call was cut off by a crash (`failed`, `hook_failed`).
   */
  lapse(
    unit: UnitOfWork,
    at: ConversationAt,
    turnId: string,
    from: 'acknowledged' | 'pending',
  ): Promise<MovedTurn | undefined> {
    const [to, reason]: [TurnStatus, TurnFailure] =
      from === 'acknowledged' ? ['expired', 'reply_timeout'] : ['failed', 'hook_failed'];
    return move(unit, at, turnId, from, to, { failure_reason: reason }, told.failed(turnId, reason));
  },

  /**
   * The conversation is ending: every turn still waiting (pending or acknowledged) fails, so no
   * reply can resolve a turn of an ended conversation. Returns what that tells, for the ending's
   * own change to carry first.
   */
  async failOpen(unit: UnitOfWork, conversationId: string): Promise<Change> {
    const failed = await failOpenTurns(unit.trx, conversationId, OPEN_TURN_STATUSES, 'conversation_ended');
    return {
      ...joined(...failed.map((turnId) => told.failed(turnId, 'conversation_ended'))),
      ...(failed.length ? { tally: { failed: failed.map(() => 'conversation_ended' as const) } } : {}),
    };
  },
};
