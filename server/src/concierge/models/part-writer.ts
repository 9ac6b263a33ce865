import { completeSentencesEnd, openSentenceEnd, sentenceStops } from '#protocol/sentences';
import { REPLY_PART_LIMITS } from '#protocol/frames';
import type { GuardrailDecision } from '#protocol/guardrails';
import { ShownText } from '../knowledge/citations.js';
import type { Answering } from '../turns/answering.js';
import type { GuardVerdict } from './guardrails.js';

/** Checks a sentence before it goes out (README, Variables and guardrails); `saidBefore`: the reply so far. */
export type SentenceCheck = (sentence: string, saidBefore: string) => Promise<GuardVerdict>;

/** A stopped sentence's verdict. */
export type Stop = Extract<GuardVerdict, { pass: false }>;

/**
 * Hands the model's words on as reply parts, each ending a sentence (at most a part's length),
 * stored one after the other; a part the store did not take is left out, and the final reply
 * carries the whole text anyway. With a check, every sentence passes it before it goes out, in
 * order (checks run at once, sentences leave one after the other): the first one stopped stops
 * the writer, and nothing written after it goes out.
 */
export class PartWriter {
  /** What the model wrote, its citation markers included. */
  #raw = '';
  readonly #shown = new ShownText();
  #sent = 0;
  /** Where the sentence marks still open at the end begin: the next look for a sentence's end starts there. */
  #open = 0;
  #paused = false;
  #next = 0;
  /** Complete sentences waiting for the part being written to be stored. */
  #unsent = '';
  #writing: Promise<void> | undefined;
  /** What went out, in order: the final reply once {@link finish} resolved. */
  #released = '';
  /** The sentences in their checks, in order. */
  #checks: Promise<void> = Promise.resolve();
  #stop: Stop | undefined;
  /** The text handed to the checks so far: what the judge is told was said before a sentence. */
  #checked = '';
  /** Counts the model's fresh starts after a stop: a sentence of an earlier one never goes out. */
  #round = 0;
  /** Set by {@link resume}: the next words released join the earlier ones. */
  #joining = false;
  readonly decisions: GuardrailDecision[] = [];

  constructor(
    private readonly answering: Pick<Answering, 'part'>,
    /** Stores no parts: only the final reply says what was written. */
    private readonly settings: { quiet: boolean },
    private readonly guard?: { check: SentenceCheck; onStop(stop: Stop): void },
  ) {}

  /** What went out, fillers included, without citation markers: the final reply, once {@link finish} resolved. */
  get text(): string {
    return this.#released;
  }

  /** The sentence a guardrail stopped, while the writer stands stopped. */
  get stopped(): Stop | undefined {
    return this.#stop;
  }

  /** After a stopped sentence, the model writes again (a guardrail's `retry`): what it writes now is read from here. */
  resume(): void {
    this.#stop = undefined;
    this.#round++;
    this.#joining = true;
    this.#checked = this.#released;
    this.#sent = this.#open = this.#shown.text.length;
    this.#paused = true;
  }

  /** Resolves once every sentence handed to the checks so far has its verdict. */
  checked(): Promise<void> {
    return this.#checks;
  }

  /** The same with its markers: what the citations are read from. */
  get written(): string {
    return this.#raw;
  }

  /** A piece of the model's words: each sentence it completes goes on as a part (only the new tail is read). */
  write(piece: string): void {
    if (this.#stop) return;
    // A round's words after a tool call continue the reply: apart from the words before them.
    if (this.#paused && piece.trim()) {
      this.#paused = false;
      if (this.#raw && !/\s$/.test(this.#raw) && !/^\s/.test(piece)) this.#append(' ');
    }
    this.#append(piece);
    const text = this.#shown.text;
    const end = completeSentencesEnd(text, Math.max(this.#sent, this.#open));
    this.#open = openSentenceEnd(text);
    if (end <= this.#sent) return;
    const ready = text.slice(this.#sent, end);
    this.#sent = end;
    this.#out(ready, true);
  }

  /** The model called a tool: what it wrote so far is complete, and goes on as a part now. */
  pause(): void {
    this.#paused = true;
    const text = this.#shown.text;
    if (text.length <= this.#sent) return;
    const rest = text.slice(this.#sent);
    this.#sent = this.#open = text.length;
    this.#out(rest, true);
  }

  /** A sentence of the service's own while a tool works (the filler): said as a part, and kept in the reply. */
  say(sentence: string): void {
    this.pause();
    this.#append(`${this.#raw && !/\s$/.test(this.#raw) ? ' ' : ''}${sentence} `);
    const text = this.#shown.text;
    const said = text.slice(this.#sent);
    this.#sent = this.#open = text.length;
    // The service's own words are not the model's: not checked, but in their place among the sentences.
    if (!this.guard) return this.#release(said, true);
    this.#checked += said;
    this.#checks = this.#checks.then(() => void (this.#stop || this.#release(said, true)));
  }

  /**
   * Markers go as a whole: one still open at the end (`[1`) stays out of any complete sentence, and
   * once closed it is gone from the text, before or after what was sent alike.
   */
  #append(piece: string): void {
    this.#raw += piece;
    this.#shown.push(piece);
  }

  /** The model is done: its last words (no sentence end after them) are checked too, then every part is stored. */
  async finish(): Promise<void> {
    const text = this.#shown.text;
    if (!this.#stop && text.length > this.#sent) {
      const tail = text.slice(this.#sent);
      this.#sent = this.#open = text.length;
      // The final reply carries the tail: it is no part of its own.
      this.#out(tail, false);
    }
    await this.#checks;
    await (this.#writing ?? Promise.resolve());
  }

  /** Complete sentences, each through the check (all checked at once), going out in order as each passes. */
  #out(text: string, asPart: boolean): void {
    if (!this.guard) return this.#release(text, asPart);
    let start = 0;
    const sentences: string[] = [];
    for (const stop of sentenceStops(text)) {
      sentences.push(text.slice(start, stop));
      start = stop;
    }
    if (start < text.length) sentences.push(text.slice(start));
    const round = this.#round;
    for (const sentence of sentences) {
      const before = this.#checked;
      this.#checked += sentence;
      const verdict: Promise<GuardVerdict> = sentence.trim()
        ? this.guard.check(sentence.trim(), before)
        : Promise.resolve({ pass: true });
      this.#checks = this.#checks.then(async () => {
        const v = await verdict;
        // Written before a stop, or before the model was asked again: none of it goes out.
        if (this.#stop || round !== this.#round) return;
        if (v.decision) this.decisions.push(v.decision);
        if (v.pass) return this.#release(sentence, asPart);
        this.#stop = v;
        this.guard!.onStop(v);
      });
    }
  }

  #release(text: string, asPart: boolean): void {
    if (this.#joining) {
      // The first words after a stop join what went out before with one space.
      this.#joining = false;
      text = `${this.#released && !/\s$/.test(this.#released) ? ' ' : ''}${this.#released ? text.trimStart() : text}`;
    }
    this.#released += text;
    if (asPart) this.#store(text);
  }

  /**
   * Sentences are stored one part at a time: while a part is being written, what completes meanwhile
   * waits and goes as the next part, so a model that writes faster than the store takes its parts
   * costs a few writes, not one per sentence. A part the store did not take is left out; the final
   * reply carries the whole text anyway.
   */
  #store(text: string): void {
    if (this.settings.quiet) return;
    this.#unsent += text;
    this.#writing ??= this.#drain();
  }

  async #drain(): Promise<void> {
    try {
      while (this.#unsent.trim()) {
        const [first = '', ...rest] = pieces(this.#unsent);
        this.#unsent = rest.join('');
        const part = this.#next++;
        if (part >= REPLY_PART_LIMITS.parts) {
          this.#unsent = '';
          return;
        }
        await this.answering.part(part, first);
      }
    } finally {
      this.#writing = undefined;
    }
  }
}

/** `text` cut into parts of at most a part's length in code points, whitespace kept where it was. */
function pieces(text: string): string[] {
  const points = [...text];
  const out: string[] = [];
  for (let i = 0; i < points.length; i += REPLY_PART_LIMITS.partChars)
    out.push(points.slice(i, i + REPLY_PART_LIMITS.partChars).join(''));
  return out.filter((piece) => piece.trim());
}
