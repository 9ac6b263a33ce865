import { sentencesOf } from '#protocol/sentences';
import type { Passage } from '../../knowledge/knowledge-retrieval.js';
import { askedFor, contentWords, subjectWords, wordsIn, wordsOf } from '../../knowledge/knowledge-words.js';
import { type Citation, linkTo } from './citations.js';

/** Words that say what does not hold, in the languages the service speaks most. */
const NEGATION =
  /\b(not|no|don't|doesn't|cannot|can't|never|except|nicht|kein|keine|keinen|nie|außer|pas|jamais|sauf|nunca|excepto|salvo|non|mai|tranne|não|nunca|niet|geen|nooit)\b|n't\b/i;

/** How many of `words` `text` holds as whole words: what a question asks for ("cost", "am") is no prefix of another. */
const whole = (text: string, words: readonly string[]): number => {
  const held = new Set(wordsOf(text));
  return words.filter((w) => held.has(w)).length;
};

/** A reply built on a passage: its most relevant sentences, and a link to where it came from. */
export interface PassageAnswer {
  text: string;
  citation: Citation | undefined;
  /** The share of the question's meaningful words the passage holds. */
  match: number;
}

/**
 * The answer the best passage gives (README, Answers from your documents): when it holds at least
 * `minMatch` of the question's meaningful words (for a follow-up, with the words of the questions it
 * leans on, `leansOn`), its one to three sentences that answer it, in the passage's order, and a link
 * to its section; otherwise none. A sentence answers as it holds the question's own words (twice as
 * much as those it leans on) and what it asks for: a price, a time, a place.
 */
export function answerFrom(
  question: string,
  passages: readonly Passage[],
  minMatch: number,
  leansOn: readonly string[] = [],
): PassageAnswer | undefined {
  const best = passages[0];
  const own = leansOn.length ? subjectWords(question) : contentWords(question);
  const earlier = [...new Set(leansOn.flatMap(contentWords))].filter((w) => !own.includes(w));
  const words = own.length ? own : earlier;
  if (!best || !words.length) return undefined;
  const match = wordsIn(`${best.title} ${best.heading} ${best.text}`, words).length / words.length;
  if (match < minMatch) return undefined;
  const asked = askedFor(question);
  // Every meaningful word of the question picks its sentence ("open" in "when does it open?"), even
  // those that find no passage on their own.
  const said = contentWords(question);
  const sentences = sentencesOf(best.text.replace(/\s+/g, ' '), true);
  // A sentence that says what does not hold ("vans do not fit") is the exception, not the answer,
  // unless the question asks what does not.
  const exception = (text: string) => !NEGATION.test(question) && NEGATION.test(text);
  const scoreOf = (text: string) =>
    2 * wordsIn(text, said).length +
    wordsIn(text, earlier).length +
    Math.min(whole(text, asked), 2) -
    (exception(text) ? 2 : 0);
  const scores = sentences.map(scoreOf);
  const top = Math.max(...scores);
  // A section whose heading names what is asked ("Parking" for "where can I park?") answers with
  // its opening, unless a later sentence answers better than heading and opening together, or the
  // opening does not hold what the question asks for (a price, a time, a place).
  const opening = sentences[0] ?? '';
  const lead = !asked.length || whole(opening, asked) ? scoreOf(`${best.heading} ${opening}`) : -1;
  const first = lead >= top ? 0 : scores.indexOf(top);
  // The best sentence, and the ones after it while they still hold a word of the question (at most
  // three): of its own, else of what it asks for, else of the questions it leans on; never an
  // exception after the answer. A question in the text ("Arriving after midnight?") is followed by its answer.
  const about = own.length ? said : asked.length ? asked : earlier;
  const holds = (text: string) =>
    !exception(text) && (own.length || !asked.length ? wordsIn(text, about).length > 0 : whole(text, asked) > 0);
  let last = first;
  while (
    last + 1 < sentences.length &&
    last - first < 2 &&
    (sentences[last]!.endsWith('?') || holds(sentences[last + 1]!))
  )
    last++;
  return {
    text: sentences.slice(first, last + 1).join(' '),
    citation: linkTo(best),
    match,
  };
}
