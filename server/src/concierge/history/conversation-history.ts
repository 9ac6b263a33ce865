import type { GuardrailDecision } from '#protocol/guardrails';
import { notFound } from '../../errors.js';
import { type Page, pageOf } from '../../http/pagination.js';
import type { Db } from '../../database.js';
import type { Dialect } from '../../store/db.js';
import { answerCallsOf } from '../deliveries/delivery.repository.js';
import { toDelivery } from '../deliveries/delivery.view.js';
import type { Delivery } from '../deliveries/delivery.schemas.js';

/** A delivery record as its reader may read it. */
type DeliveryView = (delivery: Delivery) => Delivery;
import {
  analysesOf,
  conversationsAfter,
  eventsOf,
  findHistoryRow,
  type HistoryCursor,
  type HistoryRow,
  listConversations,
  turnsOf,
} from './conversation-history.repository.js';
import type { SearchIndex } from './search-index.js';
import { replyPartsOf } from '../conversations/turn.repository.js';
import type { Conversation, ConversationDetail, ConversationFilter, ConversationTurn } from './conversation.schemas.js';
import type { StoredEvent } from '#protocol/frames';

/** Conversations one export streams at most; the next request narrows `created_before`. */
export const EXPORT_LIMIT = 10_000;
/** Conversations read per step of an export: its memory, whatever the count. */
const EXPORT_STEP = 100;

export function toConversation(row: HistoryRow): Conversation {
  return {
    id: row.id,
    deployment_id: row.deployment_id,
    agent_id: row.agent_id,
    agent_version: row.agent_version,
    status: row.status,
    end_reason: row.end_reason,
    user: { sub: row.user_sub, name: row.user_name },
    turn_count: row.turn_count,
    failed_turn_count: Number(row.failed_turn_count),
    handler: row.handler,
    handler_name: row.handler_name,
    needs_person: row.needs_person === 1,
    handoff_reason: row.handoff_reason,
    waiting_turns: Number(row.waiting_turns),
    preview: row.preview === 1,
    last_message: lastMessage(row.last_said),
    handoff_at: row.handoff_at,
    // Every stored event and every taken turn touch the conversation's row.
    last_activity_at: row.updated_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ended_at: row.ended_at,
  };
}

const PREVIEW_CHARS = 140;

/** What a list item quotes of the last thing said: who, and its start, cut at a word. */
function lastMessage(frame: string | null): Conversation['last_message'] {
  if (!frame) return null;
  const said = JSON.parse(frame) as StoredEvent;
  if (said.type !== 'turn_accepted' && said.type !== 'reply' && said.type !== 'message') return null;
  const from = said.type === 'turn_accepted' ? 'visitor' : said.type === 'reply' && !said.name ? 'agent' : 'person';
  const text = said.text.replace(/\s+/g, ' ').trim();
  if ([...text].length <= PREVIEW_CHARS) return { from, text };
  const cut = [...text].slice(0, PREVIEW_CHARS - 1).join('');
  return { from, text: `${cut.slice(0, cut.lastIndexOf(' ') > 80 ? cut.lastIndexOf(' ') : cut.length)}…` };
}

/** Groups rows by one of their keys, keeping their order. */
function groupBy<T>(rows: readonly T[], key: (row: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const group = groups.get(key(row));
    if (group) group.push(row);
    else groups.set(key(row), [row]);
  }
  return groups;
}

/** What a customer reads of its conversations: the list, one in full (turns, hook attempts, events), and the export. */
export class ConversationHistory {
  constructor(private readonly parts: { db: Db; dialect: Dialect; searchIndex: SearchIndex }) {}

  async list(customerId: string, filter: ConversationFilter, page: Page) {
    if (filter.search) await this.parts.searchIndex.catchUp();
    return pageOf(
      page,
      await listConversations(this.parts.db, this.parts.dialect, customerId, filter, page),
      toConversation,
    );
  }

  /** One conversation as the list shows it. */
  async item(customerId: string, id: string): Promise<Conversation> {
    const row = await findHistoryRow(this.parts.db, this.parts.dialect, customerId, id);
    if (!row) throw notFound('Conversation');
    return toConversation(row);
  }

  /** A conversation in full; `seen` shows each delivery record as its reader may read it (README, Your team). */
  async get(customerId: string, id: string, seen: DeliveryView = (d) => d): Promise<ConversationDetail> {
    const row = await findHistoryRow(this.parts.db, this.parts.dialect, customerId, id);
    if (!row) throw notFound('Conversation');
    const [detail] = await this.details([row], seen);
    return detail!;
  }

  /** One NDJSON line per conversation, newest first, read a step at a time: memory stays flat however many there are. */
  async *export(customerId: string, filter: ConversationFilter, seen: DeliveryView = (d) => d): AsyncGenerator<string> {
    if (filter.search) await this.parts.searchIndex.catchUp();
    let after: HistoryCursor | undefined;
    for (let sent = 0; sent < EXPORT_LIMIT;) {
      const rows = await conversationsAfter(
        this.parts.db,
        this.parts.dialect,
        customerId,
        filter,
        after,
        Math.min(EXPORT_STEP, EXPORT_LIMIT - sent),
      );
      if (!rows.length) return;
      yield (await this.details(rows, seen)).map((d) => `${JSON.stringify(d)}\n`).join('');
      sent += rows.length;
      after = rows[rows.length - 1]!;
    }
  }

  /** Conversations in full, in five reads whatever their number: turns, hook attempts, events, analyses, then the turns' reply parts. */
  private async details(rows: readonly HistoryRow[], seen: DeliveryView): Promise<ConversationDetail[]> {
    const ids = rows.map((r) => r.id);
    const [turns, events, hookCalls, analyses] = await Promise.all([
      turnsOf(this.parts.db, ids),
      eventsOf(this.parts.db, ids),
      answerCallsOf(this.parts.db, ids),
      analysesOf(this.parts.db, ids),
    ]);
    const streamed = await replyPartsOf(
      this.parts.db,
      turns.filter((t) => t.first_part_at).map((t) => t.id),
    );
    const partsBy = groupBy(streamed, (p) => p.turn_id);
    const calls = hookCalls.map(toDelivery);
    const attempts = groupBy(
      calls.filter((d) => d.kind === 'turn_hook'),
      (d) => d.turn_id!,
    );
    const modelCalls = groupBy(
      calls.filter((d) => d.kind !== 'turn_hook'),
      (d) => d.turn_id!,
    );
    const turnsBy = groupBy(turns, (t) => t.conversation_id);
    const eventsBy = groupBy(events, (e) => e.conversation_id);
    return rows.map((row) => ({
      ...toConversation(row),
      turns: (turnsBy.get(row.id) ?? []).map((turn): ConversationTurn => ({
        id: turn.id,
        client_turn_id: turn.client_turn_id,
        text: turn.text,
        words: { kept: turn.kept ?? 'everything', text_chars: turn.text_chars, reply_chars: turn.reply_chars },
        mode: turn.mode,
        language: turn.language,
        status: turn.status,
        failure_reason: turn.failure_reason,
        reply_text: turn.reply_text,
        reply_actions: turn.reply_actions ? JSON.parse(turn.reply_actions) : [],
        parts: (partsBy.get(turn.id) ?? []).map(({ part, text, received_at }) => ({ part, text, received_at })),
        first_part_at: turn.first_part_at,
        guardrails: turn.guardrails ? (JSON.parse(turn.guardrails) as GuardrailDecision[]) : [],
        feedback: turn.feedback_rating
          ? { rating: turn.feedback_rating, comment: turn.feedback_comment, at: turn.feedback_at! }
          : null,
        recognition: turn.recognition_engine
          ? { engine: turn.recognition_engine, duration_ms: turn.recognition_ms!, audio_ms: turn.recognition_audio_ms! }
          : null,
        voice:
          turn.voice_speech_ms === null
            ? null
            : {
                speech_ms: turn.voice_speech_ms,
                end_of_turn_ms: turn.voice_end_of_turn_ms!,
                recognition_ms: turn.recognition_ms ?? 0,
                first_audio_ms: turn.voice_first_audio_ms,
              },
        heard:
          turn.heard_text === null
            ? null
            : { text: turn.heard_text, interrupted: turn.heard_interrupted === 1, at: turn.heard_at! },
        page: turn.page_url === null ? null : { url: turn.page_url, title: turn.page_title ?? '' },
        created_at: turn.created_at,
        acknowledged_at: turn.acknowledged_at,
        resolved_at: turn.resolved_at,
        replied_by:
          turn.status !== 'resolved'
            ? null
            : turn.replied_by
              ? { type: 'person', name: turn.replied_by }
              : { type: 'agent' },
        hook_attempts: (attempts.get(turn.id) ?? []).map(seen),
        knowledge: turn.knowledge ? JSON.parse(turn.knowledge) : null,
        model_calls: (modelCalls.get(turn.id) ?? []).map(seen),
        reply_received: turn.reply_received_at
          ? { at: turn.reply_received_at, duplicates: turn.reply_duplicates }
          : null,
      })),
      events: (eventsBy.get(row.id) ?? []).map((e) => JSON.parse(e.frame)),
      analysis: analyses.has(row.id) ? JSON.parse(analyses.get(row.id)!) : null,
    }));
  }
}
