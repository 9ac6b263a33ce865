import { completeSentencesEnd, openSentenceEnd } from '#protocol/sentences';
import { REPLY_PART_LIMITS } from '#protocol/frames';
import { ShownText } from '../knowledge/citations.js';
import type { Answering } from '../turns/answering.js';

/**
 * Hands the model's words on as reply parts, each ending a sentence (at most a part's length),
 * stored one after the other; a part the store did not take is left out, and the final reply
 * carries the whole text anyway.
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

  constructor(
    private readonly answering: Pick<Answering, 'part'>,
    /** Stores no parts: only the final reply says what was written. */
    private readonly settings: { quiet: boolean },
  ) {}

  /** Everything written so far, fillers included, without citation markers: the final reply. */
  get text(): string {
    return this.#shown.text;
  }

  /** The same with its markers: what the citations are read from. */
  get written(): string {
    return this.#raw;
  }

  /** A piece of the model's words: each sentence it completes goes on as a part (only the new tail is read). */
  write(piece: string): void {
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
    this.#store(ready);
  }

  /** The model called a tool: what it wrote so far is complete, and goes on as a part now. */
  pause(): void {
    this.#paused = true;
    const text = this.#shown.text;
    if (text.length <= this.#sent) return;
    const rest = text.slice(this.#sent);
    this.#sent = this.#open = text.length;
    this.#store(rest);
  }

  /** A sentence of the service's own while a tool works (the filler): said as a part, and kept in the reply. */
  say(sentence: string): void {
    this.pause();
    this.#append(`${this.#raw && !/\s$/.test(this.#raw) ? ' ' : ''}${sentence} `);
    const text = this.#shown.text;
    const said = text.slice(this.#sent);
    this.#sent = this.#open = text.length;
    this.#store(said);
  }

  /**
   * Markers go as a whole: one still open at the end (`[1`) stays out of any complete sentence, and
   * once closed it is gone from the text, before or after what was sent alike.
   */
  #append(piece: string): void {
    this.#raw += piece;
    this.#shown.push(piece);
  }

  /** Resolves once every part handed on so far is stored (or given up on). */
  settled(): Promise<unknown> {
    return this.#writing ?? Promise.resolve();
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
