import type { CountryCode } from 'libphonenumber-js/max';
import type { KeepMode, RedactionKind } from '#protocol/privacy';
import type { NewEvent } from '#protocol/frames';
import type { TranscriptEvent } from '#protocol/transcript-events';
import type { DeploymentContext } from '../../deployments/deployment-context.js';
import { redact, type Redacted, regionOf } from './detectors.js';

/** A text kept as nothing: what a `metadata` deployment stores where the words were. */
export const NOT_KEPT = '';

/**
 * What one deployment keeps of what is said (README, Privacy: what is kept), for one unit of work:
 * each text as said goes in, what may be stored comes out. Redacting the same text twice in a unit
 * (its column, its widget event, its transcript event) costs once.
 */
export class Keeping {
  readonly #seen = new Map<string, Redacted>();

  constructor(
    readonly mode: KeepMode,
    private readonly kinds: readonly RedactionKind[],
    private readonly region: CountryCode | undefined,
  ) {}

  /** The deployment's keeping, phone numbers read for the region of `language` (the turn's, else the agent's). */
  static of(dep: Pick<DeploymentContext, 'privacy' | 'agent'>, language?: string): Keeping {
    return new Keeping(dep.privacy.keep, dep.privacy.redact, regionOf(language ?? dep.agent.language));
  }

  /** Whether what is stored is what was said. */
  get verbatim(): boolean {
    return this.mode === 'everything';
  }

  /** What is stored of `said`, with what was taken out of it. */
  text(said: string): Redacted {
    if (this.mode === 'everything') return { text: said, counts: {} };
    if (this.mode === 'metadata') return { text: NOT_KEPT, counts: {} };
    let kept = this.#seen.get(said);
    if (!kept) this.#seen.set(said, (kept = redact(said, this.kinds, this.region)));
    return kept;
  }

  /** {@link text}, the text alone: for a column beside the event that counts it, or a recorded HTTP body. */
  stored(said: string): string;
  stored(said: string | null): string | null;
  stored(said: string | null): string | null {
    return said === null ? null : this.text(said).text;
  }

  /** A widget event as stored, and what it counts (a reply's parts count with the reply). */
  event<E extends NewEvent>(event: E): { record: E; counts: Redacted['counts'] } {
    const fields = EVENT_WORDS[event.type];
    if (!fields) return { record: event, counts: {} };
    const kept = this.fields(event, fields);
    return event.type === 'reply_part' ? { record: kept.record, counts: {} } : kept;
  }

  /** A transcript event as stored: its counts are its widget event's. */
  transcript(event: TranscriptEvent): TranscriptEvent {
    const fields = TRANSCRIPT_WORDS[event.type];
    return fields ? { ...event, data: this.fields(event.data, fields).record } : event;
  }

  /**
   * `record` with its fields of words (`fields`, each a string or absent) as stored, and what was
   * taken out of them; the record itself when every word is kept.
   */
  fields<T extends object>(record: T, fields: readonly string[]): { record: T; counts: Redacted['counts'] } {
    if (this.verbatim) return { record, counts: {} };
    const counts: Redacted['counts'] = {};
    let copy: Record<string, unknown> | undefined;
    for (const field of fields) {
      const value = (record as Record<string, unknown>)[field];
      if (typeof value !== 'string') continue;
      const kept = this.text(value);
      (copy ??= { ...(record as Record<string, unknown>) })[field] = kept.text;
      addCounts(counts, kept.counts);
    }
    return { record: (copy ?? record) as T, counts };
  }
}

/** The fields of words in each widget event that has any. */
const EVENT_WORDS: Partial<Record<NewEvent['type'], readonly string[]>> = {
  greeting: ['text'],
  turn_accepted: ['text'],
  reply_part: ['text'],
  reply: ['text'],
  message: ['text'],
  still_waiting: ['text'],
  reengaged: ['text'],
};

/** The fields of words in each transcript event that has any. */
const TRANSCRIPT_WORDS: Partial<Record<TranscriptEvent['type'], readonly string[]>> = {
  'turn.created': ['text'],
  'turn.resolved': ['reply_text'],
  'turn.rated': ['comment'],
  'turn.interrupted': ['heard_text'],
  'message.created': ['text'],
  'conversation.handoff': ['reason'],
};

/** Whether a deployment keeps any words: an analysis (README, Tests and analysis) has nothing to read otherwise. */
export const keepsWords = (dep: Pick<DeploymentContext, 'privacy'>): boolean => dep.privacy.keep !== 'metadata';

/** Adds `more` into `into`. */
export function addCounts(into: Redacted['counts'], more: Redacted['counts']): void {
  for (const [kind, n] of Object.entries(more) as [RedactionKind, number][]) into[kind] = (into[kind] ?? 0) + n;
}
