import type { ReplyAction } from '#protocol/frames';
import type { Passage } from '../../knowledge/knowledge-retrieval.js';
import { contentWords, wordsIn } from '../../knowledge/knowledge-words.js';

export type Citation = Extract<ReplyAction, { type: 'link' }>;

/** A reply cites at most this many sources. */
const MAX_CITATIONS = 3;

const isBlank = (char: string | undefined) => char !== undefined && /\s/.test(char);
const isDigit = (char: string | undefined) => char !== undefined && char >= '0' && char <= '9';

/** A marker at `open` (a `[`): where it ends (after its `]`) and the numbers it holds; undefined when it is none. */
function markerAt(text: string, open: number): { end: number; numbers: number[] } | undefined {
  const numbers: number[] = [];
  let at = open + 1;
  for (;;) {
    let digits = 0;
    while (isDigit(text[at + digits])) digits++;
    if (digits < 1 || digits > 2) return undefined;
    numbers.push(Number(text.slice(at, at + digits)));
    at += digits;
    if (text[at] === ']') return { end: at + 1, numbers };
    while (isBlank(text[at])) at++;
    if (text[at] !== ',') return undefined;
    at++;
    while (isBlank(text[at])) at++;
  }
}

/**
 * `[1]`, `[2, 3]`: the numbers a model is asked to cite its passages by (README, Answers from your
 * documents), each with the blanks before it, found by one walk over the text: a model's words are
 * anyone's, and a pattern that backtracked over a run of blanks held the node for seconds.
 */
function* markersOf(text: string): Generator<{ start: number; end: number; numbers: number[] }> {
  let after = 0;
  for (let open = text.indexOf('['); open >= 0; open = text.indexOf('[', open + 1)) {
    const marker = markerAt(text, open);
    if (!marker) continue;
    let start = open;
    while (start > after && isBlank(text[start - 1])) start--;
    yield { start, ...marker };
    after = marker.end;
    open = marker.end - 1;
  }
}

/** The text as shown and said: the markers are for the service, never for the visitor. */
export function withoutMarkers(text: string): string {
  let shown = '';
  let from = 0;
  for (const { start, end } of markersOf(text)) {
    shown += text.slice(from, start);
    from = end;
  }
  return from ? shown + text.slice(from) : text;
}

/** Blanks held back at the end of a streamed reply, at most: blanks right before a marker go with it. */
const HELD_BLANKS = 64;

/**
 * A streamed reply without its markers, kept as it grows: what can no longer be part of a marker
 * is settled once, and only the tail that still might be (a few blanks, an open `[2,`) is read
 * again with each piece, so a reply costs time in proportion to its length.
 */
export class ShownText {
  #settled = '';
  #tail = '';
  #text = '';

  /** The reply so far as it is shown: {@link withoutMarkers} of everything pushed. */
  get text(): string {
    return this.#text;
  }

  push(piece: string): void {
    const tail = this.#tail + piece;
    const keep = openEnd(tail);
    this.#settled = shownAfter(this.#settled, tail.slice(0, keep));
    this.#tail = tail.slice(keep);
    this.#text = shownAfter(this.#settled, this.#tail);
  }
}

/** `shown` followed by `raw` without its markers: a marker at the very start of `raw` takes the blanks before it along. */
function shownAfter(shown: string, raw: string): string {
  const first = markersOf(raw).next();
  return (!first.done && first.value.start === 0 ? shown.trimEnd() : shown) + withoutMarkers(raw);
}

/** Where the part of `tail` that a later piece could still make a marker of begins. */
function openEnd(tail: string): number {
  let end = tail.length;
  const open = tail.lastIndexOf('[');
  if (open >= 0 && tail.length - open <= 16) {
    let plain = true;
    for (let i = open + 1; plain && i < tail.length; i++)
      plain = isDigit(tail[i]) || isBlank(tail[i]) || tail[i] === ',';
    if (plain) end = open;
  }
  let start = end;
  while (start > 0 && end - start < HELD_BLANKS && isBlank(tail[start - 1])) start--;
  return start;
}

/** A link to a passage's section, labelled with its document's title; none when it has no URL. */
export function linkTo(passage: Passage): Citation | undefined {
  if (!passage.url) return undefined;
  const label = passage.title.length > 40 ? `${passage.title.slice(0, 39)}…` : passage.title;
  return { type: 'link', label, url: passage.url };
}

/**
 * The sources a model's reply (with its markers) rests on: the passages it cites by number; with no
 * marker, the best-ranked passage holding at least half of the reply's meaningful words (three at
 * least), since a reply that close to a passage was made from it. Each URL once.
 */
export function citationsOf(reply: string, passages: readonly Passage[]): Citation[] {
  const cited = [...markersOf(reply)].flatMap((m) => m.numbers.map((n) => passages[n - 1]));
  let sources = cited.filter((p): p is Passage => p !== undefined);
  if (!sources.length) {
    const words = contentWords(withoutMarkers(reply));
    const close = passages.find(
      (p) => words.length >= 3 && wordsIn(`${p.heading} ${p.text}`, words).length * 2 >= words.length,
    );
    sources = close ? [close] : [];
  }
  const links = new Map<string, Citation>();
  for (const link of sources.map(linkTo)) if (link && !links.has(link.url)) links.set(link.url, link);
  return [...links.values()].slice(0, MAX_CITATIONS);
}
