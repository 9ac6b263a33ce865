import type { ReplyAction } from '#protocol/frames';

/** What the demo hotel answers: the reply, and what it offers beside it. */
export interface Answer {
  text: string;
  actions?: ReplyAction[];
  /** Why the hotel hands the conversation to a person (its hook's synchronous answer says so). */
  handoff?: string;
}

/**
 * The demo hotel's "AI": a few keyword rules, enough for QA to see real answers come back. `site`
 * is the hotel's own address, for its links; `language` the turn's (the visitor's choice in the
 * widget's menu): in German, French or Spanish the hotel greets and answers in that language.
 */
export function answerFor(question: string, site: string, language = 'en-US'): Answer {
  if (/\b(a person|reception|human|someone real)\b/i.test(question)) {
    return {
      text: 'Of course: I have asked reception to join this conversation. Someone will be with you in a moment.',
      handoff: 'The guest asked for a person',
    };
  }
  const local = SPOKEN[language.split('-')[0]!];
  if (local) return { text: local.hello.test(question) ? local.greeting : local.passedOn(question.slice(0, 80)) };
  if (/table|dinner|restaurant/i.test(question)) {
    return {
      text: 'Our restaurant by the water serves dinner from 6 to 10 pm. Pick a time and I will ask the front desk to hold a table, or book online.',
      actions: [
        { type: 'quick_reply', label: '7 pm', text: 'A table for two at 7 pm, please.' },
        { type: 'quick_reply', label: '8 pm', text: 'A table for two at 8 pm, please.' },
        { type: 'link', label: 'Book online', url: `${site}/book` },
      ],
    };
  }
  for (const [pattern, text] of RULES) if (pattern.test(question)) return { text };
  // The page scrolls to its rooms as the answer arrives: a client action the page registered.
  if (/rooms?\b|suite|view/i.test(question)) {
    return {
      text: 'All twenty-four rooms look over the harbour. I have scrolled the page to them: the suites on the top floor have a balcony.',
      actions: [{ type: 'client', name: 'show_rooms' }],
    };
  }
  return {
    text: `Good question. I have passed "${question.slice(0, 80)}" on to the front desk; they can also help by phone on 9.`,
  };
}

/** The languages the demo hotel answers in besides English: a greeting, and passing the question on. */
const SPOKEN: Record<string, { hello: RegExp; greeting: string; passedOn(question: string): string }> = {
  de: {
    hello: /hallo|guten (tag|morgen|abend)/i,
    greeting: 'Hallo! Wie kann ich Ihnen bei Ihrem Aufenthalt helfen?',
    passedOn: (q) =>
      `Gute Frage. Ich habe „${q}“ an die Rezeption weitergegeben; dort hilft man Ihnen auch telefonisch unter der 9.`,
  },
  fr: {
    hello: /bonjour|bonsoir|salut/i,
    greeting: 'Bonjour ! Comment puis-je vous aider pendant votre séjour ?',
    passedOn: (q) => `Bonne question. J’ai transmis « ${q} » à la réception ; vous pouvez aussi l’appeler au 9.`,
  },
  es: {
    hello: /hola|buen(os|as) (días|tardes|noches)/i,
    greeting: '¡Hola! ¿En qué puedo ayudarle durante su estancia?',
    passedOn: (q) => `Buena pregunta. He pasado «${q}» a la recepción; también pueden ayudarle por teléfono en el 9.`,
  },
};

const RULES: [RegExp, string][] = [
  [/breakfast|morning|eat/i, 'Breakfast is served from 7 to 10:30 in the garden room, on weekends until 11.'],
  [
    /check.?out|leave|late/i,
    'Checkout is at 11. A late checkout until 2 pm is free if you ask at the front desk before 9.',
  ],
  [/check.?in|arrive/i, 'Check-in opens at 3 pm; we keep your luggage if you arrive earlier.'],
  [/wi.?fi|internet|password/i, 'The Wi-Fi network is "Harbor Guest"; the password is on the card in your room.'],
  [/park|car/i, 'Parking is in the garage under the hotel, 18 euros a night; the entrance is on Quay Street.'],
  [/pool|spa|sauna|gym/i, 'The spa and pool are open from 7 to 22 on the top floor; towels are there.'],
  [/taxi|airport|train/i, 'The front desk books taxis around the clock; the airport is about 25 minutes away.'],
  [/hello|hi\b|hey/i, 'Hello! How can I help with your stay?'],
];

/** A reply as a language model writes it: a few words at a time (each part keeps its spaces). */
export function partsOf(text: string, wordsPerPart = 3): string[] {
  const words = text.match(/\S+\s*/g) ?? [text];
  const parts: string[] = [];
  for (let i = 0; i < words.length; i += wordsPerPart) parts.push(words.slice(i, i + wordsPerPart).join(''));
  return parts;
}
