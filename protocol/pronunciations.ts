/** A word said differently from how it is written: `term` is replaced by `say` (README, The agent's own voice). */
export interface Saying {
  term: string;
  say: string;
  /** Only in this language (`de` or `de-AT`); absent: in every language. */
  language?: string | undefined;
}

const escaped = (term: string) => term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether `language` (a BCP 47 tag) is one a saying is for: its own, or a region of it. */
const forLanguage = (saying: Saying, language: string) =>
  !saying.language ||
  language.toLowerCase() === saying.language.toLowerCase() ||
  language.toLowerCase().startsWith(`${saying.language.toLowerCase()}-`);

/**
 * `text` as it is to be spoken in `language`: each term replaced where it stands as a whole word
 * (not inside another), whatever its case; the longest term first, so "Hotel Adlon" wins over
 * "Adlon". Only what is spoken changes, never what is shown.
 */
export function pronounced(text: string, sayings: readonly Saying[] | undefined, language: string): string {
  const mine = (sayings ?? []).filter((s) => forLanguage(s, language));
  if (!mine.length) return text;
  const byTerm = new Map(mine.map((s) => [s.term.toLowerCase(), s.say]));
  const terms = [...byTerm.keys()].sort((a, b) => b.length - a.length).map(escaped);
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${terms.join('|')})(?![\\p{L}\\p{N}_])`, 'giu');
  return text.replace(pattern, (found) => byTerm.get(found.toLowerCase()) ?? found);
}
