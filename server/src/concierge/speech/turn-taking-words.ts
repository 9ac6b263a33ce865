/**
 * The words turn-taking listens for, by language (the widget's 15, by their language subtag): what
 * a sentence that is not finished ends in, the short answers a closed question gets, and the
 * sounds of someone listening ("mm-hm") that must not interrupt the agent. Lower case; a phrase is
 * words joined by one space. Languages written without spaces (ja, ko, zh) are matched by ending.
 */
export interface TurnTakingWords {
  /** A turn whose words end in one of these is not finished: a conjunction, a filler, an article. */
  unfinished: readonly string[];
  /** A whole turn of one of these answers a closed question: it may end sooner. */
  shortAnswers: readonly string[];
  /** Said over the agent while listening: no interruption. */
  backchannels: readonly string[];
}

// One language a few lines: the lists read as the table they are.
// prettier-ignore
export const TURN_TAKING_WORDS: Readonly<Record<string, TurnTakingWords>> = {
  en: {
    unfinished: ['and', 'but', 'or', 'so', 'because', 'um', 'uh', 'er', 'erm', 'like', 'the', 'a', 'an', 'to', 'of', 'with', 'for', 'if', 'that', 'my', 'your', 'is', 'at', 'dot'],
    shortAnswers: ['yes', 'no', 'yeah', 'yep', 'nope', 'sure', 'okay', 'ok'],
    backchannels: ['mm-hm', 'mhm', 'mm', 'uh-huh', 'yeah', 'yes', 'okay', 'ok', 'right', 'sure', 'i see', 'got it'],
  },
  es: {
    unfinished: ['y', 'pero', 'o', 'porque', 'entonces', 'eh', 'este', 'pues', 'el', 'la', 'los', 'las', 'un', 'una', 'de', 'con', 'para', 'que', 'mi'],
    shortAnswers: ['sí', 'si', 'no', 'vale', 'claro'],
    backchannels: ['sí', 'si', 'ajá', 'aja', 'vale', 'claro', 'ya', 'bueno', 'mhm'],
  },
  fr: {
    unfinished: ['et', 'mais', 'ou', 'donc', 'parce', 'euh', 'ben', 'le', 'la', 'les', 'un', 'une', 'de', 'du', 'des', 'avec', 'pour', 'que', 'mon', 'ma'],
    shortAnswers: ['oui', 'non', 'ouais', "d'accord"],
    backchannels: ['oui', 'ouais', "d'accord", 'ok', 'mh', 'mhm', 'ah bon', 'je vois'],
  },
  de: {
    unfinished: ['und', 'aber', 'oder', 'also', 'weil', 'äh', 'ähm', 'der', 'die', 'das', 'ein', 'eine', 'mit', 'für', 'zu', 'von', 'dass', 'mein', 'meine'],
    shortAnswers: ['ja', 'nein', 'genau', 'okay'],
    backchannels: ['ja', 'genau', 'mhm', 'okay', 'ok', 'stimmt', 'ach so', 'alles klar'],
  },
  it: {
    unfinished: ['e', 'ma', 'o', 'quindi', 'perché', 'ehm', 'cioè', 'il', 'la', 'lo', 'un', 'una', 'di', 'con', 'per', 'che', 'mio'],
    shortAnswers: ['sì', 'si', 'no', 'certo'],
    backchannels: ['sì', 'si', 'certo', 'ok', 'esatto', 'ah', 'mhm'],
  },
  pt: {
    unfinished: ['e', 'mas', 'ou', 'então', 'porque', 'hum', 'o', 'a', 'um', 'uma', 'de', 'com', 'para', 'que', 'meu'],
    shortAnswers: ['sim', 'não', 'nao', 'claro'],
    backchannels: ['sim', 'tá', 'ta', 'aham', 'certo', 'ok', 'claro'],
  },
  nl: {
    unfinished: ['en', 'maar', 'of', 'dus', 'omdat', 'eh', 'uh', 'de', 'het', 'een', 'met', 'voor', 'van', 'dat', 'mijn'],
    shortAnswers: ['ja', 'nee', 'oké', 'ok'],
    backchannels: ['ja', 'oké', 'ok', 'precies', 'hm', 'mhm'],
  },
  pl: {
    unfinished: ['i', 'ale', 'albo', 'lub', 'więc', 'bo', 'że', 'yyy', 'eee', 'z', 'do', 'na', 'w', 'mój'],
    shortAnswers: ['tak', 'nie'],
    backchannels: ['tak', 'aha', 'no', 'dobrze', 'mhm'],
  },
  tr: {
    unfinished: ['ve', 'ama', 'veya', 'yani', 'çünkü', 'şey', 'ee', 'ile', 'için', 'bir'],
    shortAnswers: ['evet', 'hayır', 'tamam'],
    backchannels: ['evet', 'tamam', 'hı hı', 'peki', 'anladım'],
  },
  ru: {
    unfinished: ['и', 'но', 'или', 'потому', 'так', 'э', 'ну', 'что', 'в', 'на', 'с', 'для', 'мой'],
    shortAnswers: ['да', 'нет', 'ладно'],
    backchannels: ['да', 'ага', 'угу', 'ладно', 'понятно'],
  },
  ja: {
    unfinished: ['えーと', 'えっと', 'あの', 'で', 'が', 'けど', 'から', 'と', 'て'],
    shortAnswers: ['はい', 'いいえ', 'うん', 'ええ'],
    backchannels: ['はい', 'うん', 'ええ', 'なるほど', 'そうですね'],
  },
  ko: {
    unfinished: ['그리고', '그런데', '근데', '음', '어', '그래서', '하고'],
    shortAnswers: ['네', '예', '아니요', '응'],
    backchannels: ['네', '응', '아', '그렇군요'],
  },
  zh: {
    unfinished: ['和', '但是', '然后', '那个', '嗯', '就是', '因为', '所以'],
    shortAnswers: ['是', '对', '不是', '好', '不'],
    backchannels: ['嗯', '对', '好', '是的', '哦'],
  },
  ar: {
    unfinished: ['و', 'لكن', 'أو', 'يعني', 'لأن', 'اه'],
    shortAnswers: ['نعم', 'لا', 'أيوه'],
    backchannels: ['نعم', 'آه', 'أيوه', 'طيب'],
  },
  he: {
    unfinished: ['ו', 'אבל', 'או', 'כי', 'אז', 'אממ', 'של'],
    shortAnswers: ['כן', 'לא'],
    backchannels: ['כן', 'אהה', 'בסדר', 'נכון'],
  },
};
