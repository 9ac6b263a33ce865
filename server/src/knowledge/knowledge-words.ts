/** A question's words as the search takes them: letters and digits, lower case, each once. */
export function wordsOf(question: string): string[] {
  return [...new Set((question.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length > 1))].slice(0, 32);
}

/** Text as words are looked for in it: lower case, a hyphen inside a word gone ("Wi-Fi" holds "wifi"). */
const foldedText = (text: string): string => text.toLowerCase().replace(/(\p{L})-(?=\p{L})/gu, '$1');

/** Of `words`, those `text` holds, by their first letters (so "rooms" finds "room", "parking" finds "park"). */
export function wordsIn(text: string, words: readonly string[]): string[] {
  const haystack = foldedText(text);
  return words.filter((w) => haystack.includes(w.length > 4 ? w.slice(0, w.length - 2) : w));
}

/**
 * Words that say nothing of what is asked, per language: left out when judging whether a passage
 * answers a question, and telling which language a text is in. Question words, pronouns, articles,
 * and the words around a price or a time ("how much", "until when") that name no subject. A word
 * that means something in another of these languages is left out of the list ("van", "son", "come").
 */
const FUNCTION_WORDS: Readonly<Record<string, string>> = {
  en:
    'a an and are as at be been can could do does did for from have has how i in is it its me my of on or our the ' +
    'there to was we what when where which who why will with would you your please tell know about any here ' +
    'that this these those they them then than if so get got much many long far time until till also just need ' +
    'should shall may might am isn aren don doesn',
  de: 'der die das den dem des ein eine einen ist sind und wie wo wann was ich sie es er wir ihr mein mit für von zu im in auf bei gibt kann können bitte auch noch viel lange bis um',
  fr: 'le la les un une des est sont et comment où quand que qui quel quelle je vous il elle nous de du au aux en dans sur pour avec y a peut puis combien jusqu ça cela',
  es: 'el la los las un una unos es y cómo dónde cuándo qué quién yo usted él ella de del al en para por puedo puede cuánto cuánta hasta eso esto',
  it: 'il lo gli la le un una è sono e quando che chi io di del al in per ci posso può quanto fino',
  pt: 'o a os as um uma é são e como onde quando que quem eu você de do da no na em com para por há posso pode quanto até',
  nl: 'de het een is zijn en waar wanneer wat wie ik u jij in op voor er kunnen hoeveel',
};
const FUNCTION_WORD_SETS = Object.entries(FUNCTION_WORDS).map(
  ([language, words]) => [language, new Set(words.split(' '))] as const,
);
const FILLER_WORDS = new Set(FUNCTION_WORD_SETS.flatMap(([, words]) => [...words]));

/** The question's words that carry its meaning. */
export function contentWords(question: string): string[] {
  return wordsOf(question).filter((w) => !FILLER_WORDS.has(w));
}

/** The words a search looks for: those that carry meaning, or all of them when none does ("who are you?"). */
export function searchWords(question: string): string[] {
  const meaningful = contentWords(question);
  return meaningful.length ? meaningful : wordsOf(question);
}

/** A word that asks for a price, a time or a place rather than naming a subject ("cost", "open", "where"). */
const asksFor = (word: string): boolean => ASKS_FOR.some(([asks]) => asks.test(word));

/** The question's words that name what it is about: its meaningful words but those asking for a price, a time or a place. */
export function subjectWords(question: string): string[] {
  return contentWords(question).filter((w) => !asksFor(w));
}

/** "Is there …?", "gibt es …?": a "there" or "es" that points at nothing before. */
const THERE_IS =
  /\b(is there|are there|was there|were there|gibt es|il y a|y a-t-il|hay|c'è|ci sono|er is|er zijn)\b/gi;

/** Words that point back at what was said before, per language. */
const POINTING_BACK = new Set(
  (
    'it its that there they them this those these one then ' +
    'es das dort da dafür darin dorthin sie ihn ' +
    'ça cela ceci là y ' +
    'eso esto allí ahí allá lo ' +
    'lì là ci esso ' +
    'isso isto lá ali ' +
    'het dat daar die'
  ).split(' '),
);
/** How a question that goes on from the one before begins: "and …?", "what about …?". */
const GOING_ON = /^\s*(and|also|what about|how about|und|et|y|e|en|ook)\b/i;

/**
 * Whether a question leans on the one before it (README, Answers from your documents): it names
 * nothing of its own ("how much?", "until when?"), points back at it ("is it open on Sundays?",
 * "how do I get there?"), or goes on from it ("and on weekends?"). A question with words of its
 * own and nothing pointing back stands alone: "when is breakfast?" after parking is about breakfast.
 */
export function followsUp(question: string): boolean {
  if (!subjectWords(question).length || GOING_ON.test(question)) return true;
  return wordsOf(question.replace(THERE_IS, ' ')).some((w) => POINTING_BACK.has(w));
}

/** Any of `words` standing whole (`\b` knows no letter past ASCII: "où" would never match). */
const anyWhole = (words: string): RegExp => new RegExp(`(?<![\\p{L}\\p{N}])(${words})(?![\\p{L}\\p{N}])`, 'iu');

const ASKS_FOR: readonly (readonly [RegExp, string])[] = [
  [
    anyWhole(
      'how much|cost|costs|price|prices|pay|fee|charge|wie ?viel|kostet|kosten|preis|combien|prix|coûte|cuánto|cuanto|precio|cuesta|quanto|costa|prezzo|hoeveel|kost',
    ),
    'cost costs euro euros € price free pay paid charge kostet kostenlos euro coûte gratuit prix cuesta gratis precio costa gratuito kost gratis',
  ],
  [
    anyWhole(
      'when|what time|until|till|open|opens|hours|wann|bis wann|uhr|geöffnet|quand|heure|jusqu|ouvert|cuándo|cuando|hora|hasta|abierto|quando|orario|wanneer',
    ),
    'am pm from until open opens daily every weekends uhr ab bis täglich geöffnet heures h à partir ouvert tous desde hasta abierto todos dalle alle aperto vanaf tot',
  ],
  [
    anyWhole('where|wo|wohin|où|dónde|donde|dove|onde|waar'),
    'on at in under behind next near entrance floor street quay across minutes unter neben eingang straße sous devant entrée rue bajo junto entrada calle sotto ingresso via onder ingang straat',
  ],
];

/**
 * What a question asks for, as words a sentence that answers it tends to hold: a price ("how
 * much"), a time ("when", "until when"), a place ("where"). They pick the sentence of a passage
 * that answers; they never find a passage on their own.
 */
export function askedFor(question: string): string[] {
  return ASKS_FOR.flatMap(([asks, words]) => (asks.test(question) ? words.split(' ') : []));
}

/**
 * The language a text is most likely in, of those {@link FUNCTION_WORDS} knows, by how many of
 * its function words it holds; undefined when it holds too few to tell.
 */
export function languageOf(text: string): string | undefined {
  const words = text.toLowerCase().match(/[\p{L}]+/gu) ?? [];
  let best: string | undefined;
  let most = 1;
  for (const [language, known] of FUNCTION_WORD_SETS) {
    const count = words.reduce((n, w) => n + (known.has(w) ? 1 : 0), 0);
    if (count > most) [best, most] = [language, count];
  }
  return best;
}
