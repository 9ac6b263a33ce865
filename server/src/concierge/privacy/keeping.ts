import type { CountryCode } from 'libphonenumber-js/max';
import type { KeepMode, RedactionKind } from '#protocol/privacy';
import type { NewEvent } from '#protocol/frames';
import type { TranscriptEvent } from '#protocol/transcript-events';
import type { DeploymentContext } from '../../deployments/deployment-context.js';
import { type KnownValue, redact, type Redacted, regionOf } from './detectors.js';

/** A text kept as nothing: what a `metadata` deployment stores where the words were. */
export const NOT_KEPT = '';

/**
 * The texts redacted last, by region and kinds: a turn's text is stored as its column, its widget
 * event, its transcript event and in its hook call's record, in two or three units of work, and is
 * redacted once. Held in memory only, a few hundred at most, as the texts in flight are.
 */
const RECENT = new Map<string, Redacted>();
const RECENT_MAX = 512;

/**
 * What one deployment keeps of what is said (README, Privacy: what is kept): each text as said goes
 * in, what may be stored comes out.
 */
export class Keeping {
  /** What a redaction depends on, as the start of its key in {@link RECENT}: made on the first redaction (most keepings never redact). */
  #key: string | undefined;

  constructor(
    readonly mode: KeepMode,
    private readonly kinds: readonly RedactionKind[],
    private readonly region: CountryCode | undefined,
    /** Names and addresses a model found in the conversation so far (README, Privacy: what is kept). */
    private readonly known: readonly KnownValue[] = [],
  ) {}

  /**
   * The deployment's keeping, phone numbers read for the region of `language` (the turn's, else the
   * agent's), with the names and addresses found in the conversation so far.
   */
  static of(
    dep: Pick<DeploymentContext, 'privacy' | 'agent'>,
    language?: string,
    known?: readonly KnownValue[],
  ): Keeping {
    return new Keeping(dep.privacy.keep, dep.privacy.redact, regionOf(language ?? dep.agent.language), known);
  }

  /** Whether what is stored is what was said. */
  get verbatim(): boolean {
    return this.mode === 'everything';
  }

  /** What is stored of `said`, with what was taken out of it. */
  text(said: string): Redacted {
    if (this.mode === 'everything') return { text: said, counts: {} };
    if (this.mode === 'metadata') return { text: NOT_KEPT, counts: {} };
    this.#key ??= `${this.region ?? ''}\n${this.kinds.join()}\n${this.known.map((v) => `${v.kind}:${v.text}`).join('\t')}\n`;
    const key = this.#key + said;
    let kept = RECENT.get(key);
    if (kept) return kept;
    kept = redact(said, this.kinds, this.region, this.known);
    if (RECENT.size >= RECENT_MAX) RECENT.delete(RECENT.keys().next().value!);
    RECENT.set(key, kept);
    return kept;
  }

  /** {@link text}, the text alone: for a column beside the event that counts it, or a recorded HTTP body. */
  stored(said: string): string;
  stored(said: string | null): string | null;
  stored(said: string | null): string | null {
    return said === null ? null : this.text(said).text;
  }

  /**
   * A recorded HTTP body (a hook call, a model call) as stored: a JSON body's strings each as
   * {@link stored} (ids, times and addresses as they are), any other body whole; nothing of it in `metadata`.
   */
  body(text: string): string {
    if (this.mode !== 'redacted') return this.stored(text);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return this.stored(text);
    }
    return JSON.stringify(json, (_key, value: unknown) =>
      typeof value === 'string' && !NOT_WORDS.test(value) ? this.stored(value) : value,
    );
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

/** Strings of a recorded body that are never words: ids, times, addresses. */
const NOT_WORDS =
  /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{4}-\d\d-\d\dT[\d:.]+Z|https?:\/\/\S*)$/i;

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
