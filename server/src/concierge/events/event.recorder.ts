import { isoNow } from '../../shared/time.js';
import type { Trx } from '../../database.js';
import type { Dialect } from '../../store/db.js';
import type { WriteBatcher } from '../../store/write-batcher.js';
import type { DeploymentContext } from '../../deployments/deployment-context.js';
import { insertOutbox } from '../deliveries/outbox.repository.js';
import type { NewEvent } from '#protocol/frames';
import { type TranscriptEvent, transcriptEventBody } from '#protocol/transcript-events';
import { newEventId } from '../deliveries/event-id.js';
import type { AnalyticsRollup } from '../analytics/analytics.rollup.js';
import type { Tally } from '../analytics/tally.js';
import type { ConversationBus } from './conversation-bus.js';
import { appendEvents, type ConversationPatch, framesOf, type StoredFrame } from './event.repository.js';
import { addCounts, Keeping } from '../privacy/keeping.js';
import type { KnownValues } from '../privacy/known-values.js';
import type { Redacted } from '../privacy/detectors.js';

/**
 * What one state change tells: widget events (stored with seqs), transcript events (for the
 * outbox), and the conversation's columns it sets with them.
 */
export interface Change {
  events: NewEvent[];
  transcript: TranscriptEvent[];
  conversation?: ConversationPatch;
  /** What it counts for the analytics and the metrics. */
  tally?: Tally;
}

/** The conversation a change happens to, and its deployment (whose transcript hook says whether transcript events are kept). */
export interface ConversationAt {
  dep: DeploymentContext;
  conversationId: string;
}

/** What one unit of work stored for one conversation, told once it commits: its widget events, and a change of who handles it. */
export interface Committed {
  customerId: string;
  deploymentId: string;
  conversationId: string;
  frames: StoredFrame[];
  /** The `conversation.handoff` data, when the conversation changed hands (or came to need a person). */
  handoff?: Record<string, unknown>;
  /** What its changes counted. */
  tallies: Tally[];
}

/**
 * One unit of work: its transaction, and what it stored there, announced by
 * {@link EventRecorder.write} once the transaction commits.
 */
export class UnitOfWork {
  readonly #committed = new Map<string, Committed>();
  readonly #keepings = new Map<string, Keeping>();
  /** Each conversation's widget events as said, for this node's sockets on it (README, Privacy: what is kept). */
  readonly #said = new Map<string, StoredFrame[]>();
  #transcript = false;

  constructor(
    readonly trx: Trx,
    /** Which store the transaction is on: how a row is locked differs. */
    readonly dialect: Dialect,
    private readonly rollup?: AnalyticsRollup,
    /** The names and addresses found in each conversation so far, redacted wherever they are said. */
    private readonly known?: KnownValues,
  ) {}

  /**
   * What the deployment keeps of what is said in this unit (README, Privacy: what is kept), phone
   * numbers read for `language`'s region: every text stored goes through it, here for the events and
   * by the turn's moves for its columns.
   */
  keeping(at: ConversationAt, language?: string): Keeping {
    // Per conversation: the names and addresses found in one are none of another's.
    const key = `${at.conversationId}\n${at.dep.id}\n${language ?? ''}`;
    let keeping = this.#keepings.get(key);
    if (!keeping) this.#keepings.set(key, (keeping = Keeping.of(at.dep, language, this.known?.of(at.conversationId))));
    return keeping;
  }

  /**
   * Stores a change's widget events (next seqs) and, with a transcript hook, its transcript events,
   * each as its deployment keeps them; this node's sockets get the widget events as said.
   */
  async record(at: ConversationAt, change: Change): Promise<void> {
    const { dep, conversationId } = at;
    const accepted = change.events.find((e) => e.type === 'turn_accepted');
    const keeping = this.keeping(at, accepted?.language);
    const redactions: Redacted['counts'] = {};
    const events = keeping.verbatim
      ? change.events
      : change.events.map((event) => {
          const kept = keeping.event(event);
          addCounts(redactions, kept.counts);
          return kept.record;
        });
    const { first, frames } = await appendEvents(this.trx, conversationId, events, change.conversation);
    const handoff = change.transcript.find((t) => t.type === 'conversation.handoff')?.data;
    if (frames.length || handoff) {
      const committed = this.#committedAt(at);
      committed.frames.push(...frames);
      const said = this.#said.get(conversationId) ?? [];
      this.#said.set(conversationId, said);
      said.push(...(keeping.verbatim ? frames : framesOf(change.events, first)));
      if (handoff) committed.handoff = keeping.transcript({ type: 'conversation.handoff', data: handoff }).data;
    }
    const tally = Object.keys(redactions).length ? { ...change.tally, redactions } : change.tally;
    if (tally) this.count(at, tally);
    if (!dep.hook.transcriptUrl || !change.transcript.length) return;
    this.#transcript = true;
    const now = isoNow();
    // Ordered with the widget events: a change without any sorts before the next one.
    let position = (first + change.events.length - 1) * 100 + 50;
    await insertOutbox(
      this.trx,
      change.transcript.map((said) => {
        const event = keeping.transcript(said);
        const id = newEventId();
        const body = transcriptEventBody({
          id,
          type: event.type,
          created_at: now,
          deployment_id: dep.id,
          conversation_id: conversationId,
          data: event.data,
        });
        return {
          id,
          deployment_id: dep.id,
          conversation_id: conversationId,
          position: position++,
          body,
          status: 'pending' as const,
          attempts: 0,
          next_attempt_at: now,
          lease_expires_at: null,
          created_at: now,
        };
      }),
    );
  }

  /** Counts what happened without a change to store (a hook call's attempts). */
  count(at: ConversationAt, tally: Tally): void {
    this.#committedAt(at).tallies.push(tally);
    this.rollup?.add(this.trx, at.dep, tally);
  }

  #committedAt({ dep, conversationId }: ConversationAt): Committed {
    let committed = this.#committed.get(conversationId);
    if (!committed)
      this.#committed.set(
        conversationId,
        (committed = { customerId: dep.customerId, deploymentId: dep.id, conversationId, frames: [], tallies: [] }),
      );
    return committed;
  }

  /** Tells what committed: the widget events as said to the sockets, all of it as stored to `onCommitted`, and transcript delivery that it has work. */
  announce(
    bus: ConversationBus,
    onTranscript: () => void,
    onCommitted: (committed: readonly Committed[]) => void,
  ): void {
    for (const [conversationId, said] of this.#said) if (said.length) bus.publish(conversationId, said);
    if (this.#committed.size) onCommitted([...this.#committed.values()]);
    if (this.#transcript) onTranscript();
  }
}

/** A part that hears of every unit of work this node committed. */
export interface CommitListener {
  committed(committed: readonly Committed[]): void;
}

/**
 * Stores what state changes tell, atomically with the changes: every change runs in a group
 * commit ({@link write}); once it commits, the widget events go to the sockets (through the bus)
 * and transcript delivery is woken. Nothing is announced that did not commit.
 */
export class EventRecorder {
  readonly #transcripts: () => void;
  readonly #committed: (committed: readonly Committed[]) => void;

  constructor(
    private readonly parts: {
      writes: WriteBatcher;
      bus: ConversationBus;
      /** Transcript delivery, woken when a unit stored transcript events. */
      transcripts: { poke(): void };
      /** Who hears what committed, after it committed (the activity stream, the metrics). */
      listeners: readonly CommitListener[];
      rollup?: AnalyticsRollup;
      dialect: Dialect;
      known?: KnownValues;
    },
  ) {
    this.#transcripts = () => parts.transcripts.poke();
    this.#committed = (committed) => {
      for (const listener of parts.listeners) listener.committed(committed);
    };
  }

  /** Runs one unit of work, keyed by what it locks (a conversation id), then announces what it stored. */
  async write<T>(key: string, work: (unit: UnitOfWork) => Promise<T>): Promise<T> {
    const { result, unit } = await this.parts.writes.run(key, async (trx) => {
      const unit = new UnitOfWork(trx, this.parts.dialect, this.parts.rollup, this.parts.known);
      return { result: await work(unit), unit };
    });
    unit.announce(this.parts.bus, this.#transcripts, this.#committed);
    return result;
  }
}
