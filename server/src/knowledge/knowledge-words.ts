/** A question's words as the search takes them: letters and digits, lower case, each once. */
export function wordsOf(question: string): string[] {
  return [...new Set((question.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 1))].slice(0, 32);
}

/** Of `words`, those `text` holds, by their first letters (so "rooms" finds "room", "parking" finds "park"). */
export function wordsIn(text: string, words: readonly string[]): string[] {
  const haystack = text.toLowerCase();
  return words.filter((w) => haystack.includes(w.length > 4 ? w.slice(0, w.length - 2) : w));
}

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

/** The words a search looks for: those that carry meaning, or all of them when none does ("who are you?"). */
export function searchWords(question: string): string[] {
  const meaningful = contentWords(question);
  return meaningful.length ? meaningful : wordsOf(question);
}
