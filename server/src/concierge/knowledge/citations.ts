import type { ReplyAction } from '#protocol/frames';
import type { Passage } from '../../knowledge/knowledge.service.js';
import { contentWords, wordsIn } from '../../knowledge/knowledge-words.js';

export type Citation = Extract<ReplyAction, { type: 'link' }>;

/** A reply cites at most this many sources. */
const MAX_CITATIONS = 3;

/** `[1]`, `[2, 3]`: the numbers a model is asked to cite its passages by (README, Answers from your documents). */
const MARKERS = /\s*\[(\d{1,2}(?:\s*,\s*\d{1,2})*)\]/g;

/** The text as shown and said: the markers are for the service, never for the visitor. */
export const withoutMarkers = (text: string): string => text.replace(MARKERS, '');

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
  const cited = [...reply.matchAll(MARKERS)].flatMap((m) => m[1]!.split(',').map((n) => passages[Number(n) - 1]));
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
