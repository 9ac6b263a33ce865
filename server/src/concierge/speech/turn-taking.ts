import { type EndOfTurn, TURN_TAKING_DEFAULTS } from '../../agents/agent-turn-taking.js';
import { TURN_TAKING_WORDS, type TurnTakingWords } from './turn-taking-words.js';

export const END_OF_TURN_DEFAULTS: EndOfTurn = TURN_TAKING_DEFAULTS.end_of_turn;

const EAGERNESS = { eager: 0.6, normal: 1, patient: 1.5 } as const;

/** Languages written without spaces between words: matched by how the words end. */
const UNSPACED = new Set(['ja', 'ko', 'zh']);

/** The words of a language (its primary subtag), English's where it has none. */
export function turnTakingWordsOf(language: string): { language: string; words: TurnTakingWords } {
  const primary = language.split('-')[0]!.toLowerCase();
  const words = TURN_TAKING_WORDS[primary];
  return words ? { language: primary, words } : { language: 'en', words: TURN_TAKING_WORDS.en! };
}

/** Lower case, curly apostrophes straight, punctuation and symbols gone but the apostrophe, single spaces. */
function normalised(text: string): string {
  return text
    .toLowerCase()
    .replace(/’/g, "'")
    .replace(/[^\p{L}\p{N}\p{M}'\s]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

const compact = (text: string) => text.replace(/[\s'-]/g, '');

/** Whether the words so far look like more is coming: a conjunction or a filler last, or a number or address being spelled. */
function unfinished(text: string, language: string, words: TurnTakingWords): boolean {
  if (!text) return false;
  if (UNSPACED.has(language)) return words.unfinished.some((w) => compact(text).endsWith(w));
  const tokens = text.split(' ');
  const last = tokens.at(-1)!;
  if (words.unfinished.includes(last)) return true;
  // Digits read one at a time (a phone number), or letters spelled (a name, an email).
  if (/^\p{N}+$/u.test(last)) return true;
  const before = tokens.at(-2);
  return before !== undefined && [...last].length === 1 && [...before].length === 1;
}

/**
 * How long a quiet after `words` ends the visitor's turn (README, Voice in every browser): the
 * longest wait after words that look unfinished ("and", "um", a number being read out), half the
 * usual after a whole turn of "yes" or "no", else the usual; scaled by the agent's eagerness.
 */
export function endOfTurnSilenceMs(
  words: string,
  language: string,
  settings: EndOfTurn = END_OF_TURN_DEFAULTS,
): number {
  const { language: lang, words: table } = turnTakingWordsOf(language);
  const text = normalised(words);
  const short = table.shortAnswers.some((answer) => compact(answer) === compact(text));
  const base = unfinished(text, lang, table)
    ? settings.max_silence_ms
    : short
      ? settings.silence_ms / 2
      : settings.silence_ms;
  return Math.round(base * EAGERNESS[settings.eagerness]);
}

/**
 * Whether `words` said over the agent are only someone listening ("mm-hm", "yeah, okay"), which
 * must not interrupt it: every part of them is one of `ignore` (the language's backchannels by
 * default), spaces and hyphens aside.
 */
export function onlyBackchannel(words: string, language: string, ignore?: readonly string[]): boolean {
  const phrases = (ignore ?? turnTakingWordsOf(language).words.backchannels).map((p) => compact(normalised(p)));
  const text = compact(normalised(words));
  if (!text) return false;
  // Can the text be cut into phrases of the list? (A turn is a few words: this is quick.)
  const reachable = new Array<boolean>(text.length + 1).fill(false);
  reachable[0] = true;
  for (let at = 0; at < text.length; at++)
    if (reachable[at]) for (const p of phrases) if (p && text.startsWith(p, at)) reachable[at + p.length] = true;
  return reachable[text.length]!;
}

/**
 * Whether `words` heard while the agent speaks are only its own words coming back (a device whose
 * echo canceller does not hear the agent's voice): every word of them is in what it is saying.
 */
export function onlyEcho(words: string, saying: string): boolean {
  const heard = normalised(words).split(' ').filter(Boolean);
  if (!heard.length) return false;
  const said = new Set(normalised(saying).split(' '));
  return heard.every((word) => said.has(word));
}
