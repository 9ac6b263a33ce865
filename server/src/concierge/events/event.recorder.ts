import { randomBase62 } from '../../shared/random.js';
import { isoNow } from '../../shared/time.js';
import type { Db } from '../../store/database.js';
import type { WriteBatcher } from '../../store/write-batcher.js';
import type { DeploymentContext } from '../deployment-context.js';
import type { NewEvent, TurnFailure } from '../protocol/frames.js';
import type { ConversationBus } from './conversation-bus.js';
import { appendEvents, type StoredFrame } from './event.repository.js';
import { insertOutbox } from './outbox.repository.js';

/** The events a transcript hook is sent (README, Transcript events). */
export const transcriptEventTypes = ['conversation.started', 'turn.created', 'turn.acknowledged', 'turn.resolved', 'turn.failed', 'conversation.ended'] as const;
export type TranscriptEventType = (typeof transcriptEventTypes)[number];

/** What one state change tells: widget events (stored with seqs) and transcript events (for the outbox). */
export interface Change {
  events: NewEvent[];
  transcript: { type: TranscriptEventType; data: Record<string, unknown> }[];
}

/** What a transaction stored, announced once it commits. */
export interface Written {
  frames: Map<string, StoredFrame[]>;
  transcript: boolean;
}

/** A unit of work in a transaction, given where to note what it records. */
export type Work<T> = (trx: Db, written: Written) => Promise<T>;

/**
 * Stores what state changes tell, atomically with the changes: every change runs in a group
 * commit ({@link write}); once it commits, the widget events go to the sockets (through the bus)
 * and transcript delivery is woken. Nothing is announced that did not commit.
 */
export class EventRecorder {
  constructor(
    private readonly writes: WriteBatcher,
    private readonly bus: ConversationBus,
    private readonly onTranscript: () => void,
  ) {}

  /** Runs one state change, keyed by what it locks (a conversation id), then announces what it stored. */
  async write<T>(key: string, work: Work<T>): Promise<T> {
    const { result, written } = await this.writes.run(key, async (trx) => {
      const written: Written = { frames: new Map(), transcript: false };
      return { result: await work(trx, written), written };
    });
    for (const [conversationId, frames] of written.frames) this.bus.publish(conversationId, frames);
    if (written.transcript) this.onTranscript();
    return result;
  }

  /** Stores a change's widget events (next seqs) and, with a transcript hook, its transcript events. */
  async record(
    trx: Db,
    written: Written,
    dep: DeploymentContext,
    conversationId: string,
    change: Change,
    patch: Parameters<typeof appendEvents>[3] = {},
  ): Promise<void> {
    const { first, frames } = await appendEvents(trx, conversationId, change.events, patch);
    if (frames.length) {
      const known = written.frames.get(conversationId);
      if (known) known.push(...frames);
      else written.frames.set(conversationId, frames);
    }
    if (!dep.transcriptHookUrl || !change.transcript.length) return;
    written.transcript = true;
    const now = isoNow();
    // Ordered with the widget events: a change without any sorts before the next one.
    let position = (first + change.events.length - 1) * 100 + 50;
    await insertOutbox(
      trx,
      change.transcript.map((event) => {
        const id = newEventId();
        const body = transcriptEventBody({ id, type: event.type, created_at: now, deployment_id: dep.id, conversation_id: conversationId, data: event.data });
        return { id, deployment_id: dep.id, conversation_id: conversationId, position: position++, body, status: 'pending' as const, attempts: 0, next_attempt_at: now, lease_expires_at: null, created_at: now };
      }),
    );
  }
}

export const newEventId = (): string => `evt_${randomBase62(24)}`;

/** A transcript event as its receiver gets it; `test` marks a sample sent by test-hook. */
export function transcriptEventBody(
  event: { id: string; type: TranscriptEventType; created_at: string; deployment_id: string; conversation_id: string; data: Record<string, unknown> },
  test = false,
): string {
  const { data, ...head } = event;
  return JSON.stringify({ ...head, ...(test ? { test: true } : {}), data });
}

/** The changes a turn goes through, each told to the widget and the transcript alike. */
export const turnChanges = {
  acknowledged: (turnId: string): Change => ({
    events: [{ type: 'turn_acknowledged', turn_id: turnId }],
    transcript: [{ type: 'turn.acknowledged', data: { turn_id: turnId } }],
  }),
  resolved(turnId: string, text: string, alsoAcknowledged: boolean): Change {
    const ack = alsoAcknowledged ? turnChanges.acknowledged(turnId) : { events: [], transcript: [] };
    return {
      events: [...ack.events, { type: 'reply', turn_id: turnId, text }],
      transcript: [...ack.transcript, { type: 'turn.resolved', data: { turn_id: turnId, reply_text: text } }],
    };
  },
  failed: (turnId: string, reason: TurnFailure): Change => ({
    events: [{ type: 'turn_failed', turn_id: turnId, reason }],
    transcript: [{ type: 'turn.failed', data: { turn_id: turnId, reason } }],
  }),
};
