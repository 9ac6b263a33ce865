import { sentencesOf } from '#protocol/sentences';
import type { ReplyAction } from '#protocol/frames';
import { type Passage, wordsIn, wordsOf } from '../../knowledge/knowledge.service.js';

/** Words that say nothing of what is asked, left out when judging whether a passage answers it. */
const FILLER_WORDS = new Set(
  (
    'a an and are as at be can could do does for from have how i in is it me my of on or our the there to was ' +
    'we what when where which who why will with would you your please tell know about any there here ' +
    'der die das ein eine ist und wie wo wann was ich sie es le la les un une est et comment où quand ' +
    'el los las y es cómo dónde cuándo qué il lo gli e è come dove quando'
  ).split(' '),
);

/** The question's words that carry its meaning. */
export function contentWords(question: string): string[] {
  return wordsOf(question).filter((w) => !FILLER_WORDS.has(w));
}

/** A reply built on a passage: its most relevant sentences, and a link to where it came from. */
export interface PassageAnswer {
  text: string;
  citation: Extract<ReplyAction, { type: 'link' }> | undefined;
  /** The share of the question's meaningful words the passage holds. */
  match: number;
}

/**
 * The answer the best passage gives (README, Answers from your documents): when it holds at least
 * `minMatch` of the question's meaningful words, its one to three sentences holding most of them,
 * in the passage's order, and a link to its section; otherwise none.
 */
export function answerFrom(
  question: string,
  passages: readonly Passage[],
  minMatch: number,
): PassageAnswer | undefined {
  const best = passages[0];
  const words = contentWords(question);
  if (!best || !words.length) return undefined;
  const match = wordsIn(`${best.title} ${best.heading} ${best.text}`, words).length / words.length;
  if (match < minMatch) return undefined;
  const sentences = sentencesOf(best.text.replace(/\s+/g, ' '), true);
  const scores = sentences.map((s) => wordsIn(s, words).length);
  const top = Math.max(...scores);
  // The best sentence, and the ones after it while they still hold a word of the question (at most three).
  const first = top > 0 ? scores.indexOf(top) : 0;
  let last = first;
  while (last + 1 < sentences.length && last - first < 2 && scores[last + 1]! > 0) last++;
  const label = best.title.length > 40 ? `${best.title.slice(0, 39)}…` : best.title;
  return {
    text: sentences.slice(first, last + 1).join(' '),
    citation: best.url ? { type: 'link', label, url: best.url } : undefined,
    match,
  };
}
