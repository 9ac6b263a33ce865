import { sentencesOf } from '#protocol/sentences';
import type { Passage } from '../../knowledge/knowledge.service.js';
import { contentWords, wordsIn } from '../../knowledge/knowledge-words.js';
import { type Citation, linkTo } from './citations.js';

/** A reply built on a passage: its most relevant sentences, and a link to where it came from. */
export interface PassageAnswer {
  text: string;
  citation: Citation | undefined;
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
  // A section whose heading names what is asked ("Parking" for "where can I park?") answers with
  // its opening, unless a later sentence holds more of the question than heading and opening do.
  const lead = wordsIn(`${best.heading} ${sentences[0] ?? ''}`, words).length;
  // The best sentence, and the ones after it while they still hold a word of the question (at most three).
  const first = lead >= top ? 0 : scores.indexOf(top);
  let last = first;
  while (last + 1 < sentences.length && last - first < 2 && scores[last + 1]! > 0) last++;
  return {
    text: sentences.slice(first, last + 1).join(' '),
    citation: linkTo(best),
    match,
  };
}
