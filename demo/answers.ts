import type { ReplyAction } from '#protocol/frames';

/** What the demo hotel answers: the reply, and what it offers beside it. */
export interface Answer {
  text: string;
  actions?: ReplyAction[];
  /** Why the hotel hands the conversation to a person (its hook's synchronous answer says so). */
  handoff?: string;
}

/** What the turn hook says of the guest's page: its events since their last turn. */
export interface PageSeen {
  events: { name: string; data?: unknown }[];
}

/** The languages the demo hotel answers in: the turn's language (the visitor's menu choice) picks one, else English. */
type Spoken = 'en' | 'de' | 'fr' | 'es';
type InEach<T> = Record<Spoken, T>;

/**
 * The demo hotel's "AI": a few keyword rules per language, enough for QA to see real answers come
 * back. `site` is the hotel's own address, for its links; `language` the turn's. A table asked
 * for at a time is held (the quick replies complete a booking); a question it has no rule for is
 * passed on to the front desk, in the guest's language.
 */
export function answerFor(question: string, site: string, language = 'en-US', page?: PageSeen): Answer {
  const lang = spokenOf(language);
  // The booking form refused the guest just before they asked (README, Greeting visitors first).
  const refused = page?.events.findLast((e) => e.name === 'booking_form_error');
  if (refused) {
    const guests = Number((refused.data as { guests?: unknown } | undefined)?.guests) || 9;
    return { text: WORDS.largeParty[lang](String(guests)), handoff: `A table for ${guests}: more than the form takes` };
  }
  if (PERSON[lang].test(question) || PERSON.en.test(question)) {
    return { text: WORDS.personJoins[lang], handoff: 'The guest asked for a person' };
  }
  const time = TABLE[lang].test(question) ? timeIn(question) : undefined;
  if (time)
    return {
      text: WORDS.tableHeld[lang](time),
      actions: [{ type: 'link', label: WORDS.change[lang], url: `${site}/book` }],
    };
  if (TABLE[lang].test(question)) {
    return {
      text: WORDS.pickATime[lang],
      actions: [
        ...TIMES[lang].map((time): ReplyAction => ({
          type: 'quick_reply',
          label: time,
          text: WORDS.tableAt[lang](time),
        })),
        { type: 'link', label: WORDS.bookOnline[lang], url: `${site}/book` },
      ],
    };
  }
  for (const topic of TOPICS) if (topic.asked[lang].test(question)) return { text: topic.answer[lang] };
  // The page scrolls to its rooms as the answer arrives: a client action the page registered.
  if (ROOMS[lang].test(question)) return { text: WORDS.rooms[lang], actions: [{ type: 'client', name: 'show_rooms' }] };
  if (HELLO[lang].test(question)) return { text: WORDS.greeting[lang] };
  return { text: WORDS.passedOn[lang](question.slice(0, 80)) };
}

const spokenOf = (language: string): Spoken => {
  const base = language.split('-')[0]!.toLowerCase();
  return base === 'de' || base === 'fr' || base === 'es' ? base : 'en';
};

/** The time a question names ("7 pm", "19 Uhr", "19 h", "19:30"), as written; undefined when it names none. */
function timeIn(question: string): string | undefined {
  const found = /\b\d{1,2}(?:[:.]\d{2})?\s*(?:am|pm|uhr|h)\b/i.exec(question) ?? /\b\d{1,2}:\d{2}\b/.exec(question);
  return found?.[0].replace(/\s+/g, ' ');
}

/** The times the quick replies offer, as each language writes them. */
const TIMES: InEach<[string, string]> = {
  en: ['7 pm', '8 pm'],
  de: ['19 Uhr', '20 Uhr'],
  fr: ['19 h', '20 h'],
  es: ['19:00', '20:00'],
};

const PERSON: InEach<RegExp> = {
  en: /\b(a person|reception|human|someone real)\b/i,
  de: /\b(einen menschen|rezeption|mitarbeiter)/i,
  fr: /\b(une personne|réception|un humain)/i,
  es: /\b(una persona|recepción|un humano)/i,
};
const HELLO: InEach<RegExp> = {
  en: /\b(hello|hi|hey)\b/i,
  de: /hallo|guten (tag|morgen|abend)/i,
  fr: /bonjour|bonsoir|salut/i,
  es: /hola|buen(os|as) (días|tardes|noches)/i,
};
const TABLE: InEach<RegExp> = {
  en: /table|dinner|restaurant/i,
  de: /tisch|abendessen|restaurant/i,
  fr: /table|dîner|restaurant/i,
  es: /mesa|cena|restaurante/i,
};
const ROOMS: InEach<RegExp> = {
  en: /rooms?\b|suite|view/i,
  de: /zimmer|suite|aussicht|blick/i,
  fr: /chambres?|suite|vue/i,
  es: /habitaci(ón|ones)|suite|vista/i,
};

/** What guests ask most, in each language the hotel speaks. */
const TOPICS: { asked: InEach<RegExp>; answer: InEach<string> }[] = [
  {
    asked: {
      en: /breakfast|morning|eat/i,
      de: /frühstück|morgens|essen/i,
      fr: /petit[- ]déjeuner|manger/i,
      es: /desayuno|comer/i,
    },
    answer: {
      en: 'Breakfast is served from 7 to 10:30 in the garden room, on weekends until 11.',
      de: 'Das Frühstück gibt es von 7 bis 10:30 Uhr im Gartensaal, am Wochenende bis 11 Uhr.',
      fr: 'Le petit-déjeuner est servi de 7 h à 10 h 30 dans la salle du jardin, le week-end jusqu’à 11 h.',
      es: 'El desayuno se sirve de 7 a 10:30 en el salón del jardín; los fines de semana, hasta las 11.',
    },
  },
  {
    asked: {
      en: /check.?out|leave|late/i,
      de: /auschecken|check.?out|abreise|spät/i,
      fr: /départ|check.?out|libérer|tard/i,
      es: /salida|check.?out|tarde/i,
    },
    answer: {
      en: 'Checkout is at 11. A late checkout until 2 pm is free if you ask at the front desk before 9.',
      de: 'Check-out ist um 11 Uhr. Ein später Check-out bis 14 Uhr ist kostenlos, wenn Sie vor 9 Uhr an der Rezeption fragen.',
      fr: 'Le départ est à 11 h. Un départ tardif jusqu’à 14 h est gratuit si vous le demandez à la réception avant 9 h.',
      es: 'La salida es a las 11. Una salida tardía hasta las 14 es gratuita si la pide en recepción antes de las 9.',
    },
  },
  {
    asked: {
      en: /check.?in|arrive/i,
      de: /einchecken|check.?in|ankunft|anreise/i,
      fr: /arrivée|arriver|check.?in/i,
      es: /llegada|llegar|check.?in/i,
    },
    answer: {
      en: 'Check-in opens at 3 pm; we keep your luggage if you arrive earlier.',
      de: 'Der Check-in beginnt um 15 Uhr; wenn Sie früher ankommen, bewahren wir Ihr Gepäck auf.',
      fr: 'L’enregistrement commence à 15 h ; si vous arrivez plus tôt, nous gardons vos bagages.',
      es: 'El check-in empieza a las 15; si llega antes, le guardamos el equipaje.',
    },
  },
  {
    asked: {
      en: /wi.?fi|internet|password/i,
      de: /wlan|wi.?fi|internet|passwort/i,
      fr: /wi.?fi|internet|mot de passe/i,
      es: /wi.?fi|internet|contraseña/i,
    },
    answer: {
      en: 'The Wi-Fi network is "Harbor Guest"; the password is on the card in your room.',
      de: 'Das WLAN heißt „Harbor Guest“; das Passwort steht auf der Karte in Ihrem Zimmer.',
      fr: 'Le réseau Wi-Fi s’appelle « Harbor Guest » ; le mot de passe est sur la carte dans votre chambre.',
      es: 'La red wifi se llama «Harbor Guest»; la contraseña está en la tarjeta de su habitación.',
    },
  },
  {
    asked: {
      en: /park|car/i,
      de: /park|auto|garage/i,
      fr: /parking|voiture|garer/i,
      es: /aparca|parking|coche/i,
    },
    answer: {
      en: 'Parking is in the garage under the hotel, 18 euros a night; the entrance is on Quay Street.',
      de: 'Geparkt wird in der Garage unter dem Hotel, 18 Euro pro Nacht; die Einfahrt ist in der Quay Street.',
      fr: 'Le parking est dans le garage sous l’hôtel, 18 euros la nuit ; l’entrée est sur Quay Street.',
      es: 'El aparcamiento está en el garaje bajo el hotel, 18 euros la noche; la entrada está en Quay Street.',
    },
  },
  {
    asked: {
      en: /pool|spa|sauna|gym/i,
      de: /pool|schwimmbad|spa|sauna|fitness/i,
      fr: /piscine|spa|sauna|salle de sport/i,
      es: /piscina|spa|sauna|gimnasio/i,
    },
    answer: {
      en: 'The spa and pool are open from 7 to 22 on the top floor; towels are there.',
      de: 'Spa und Pool sind im obersten Stock von 7 bis 22 Uhr geöffnet; Handtücher liegen dort bereit.',
      fr: 'Le spa et la piscine sont ouverts de 7 h à 22 h au dernier étage ; des serviettes vous y attendent.',
      es: 'El spa y la piscina abren de 7 a 22 en la última planta; allí hay toallas.',
    },
  },
  {
    asked: {
      en: /taxi|airport|train/i,
      de: /taxi|flughafen|bahnhof|zug/i,
      fr: /taxi|aéroport|gare|train/i,
      es: /taxi|aeropuerto|estación|tren/i,
    },
    answer: {
      en: 'The front desk books taxis around the clock; the airport is about 25 minutes away.',
      de: 'Die Rezeption bestellt rund um die Uhr Taxis; zum Flughafen sind es etwa 25 Minuten.',
      fr: 'La réception commande des taxis à toute heure ; l’aéroport est à environ 25 minutes.',
      es: 'La recepción pide taxis a cualquier hora; el aeropuerto está a unos 25 minutos.',
    },
  },
];

const WORDS = {
  personJoins: {
    en: 'Of course: I have asked reception to join this conversation. Someone will be with you in a moment.',
    de: 'Natürlich: Ich habe die Rezeption gebeten, dazuzukommen. Gleich ist jemand für Sie da.',
    fr: 'Bien sûr : j’ai demandé à la réception de rejoindre la conversation. Quelqu’un sera avec vous dans un instant.',
    es: 'Por supuesto: he pedido a recepción que se una a la conversación. Enseguida le atienden.',
  },
  greeting: {
    en: 'Hello! How can I help with your stay?',
    de: 'Hallo! Wie kann ich Ihnen bei Ihrem Aufenthalt helfen?',
    fr: 'Bonjour ! Comment puis-je vous aider pendant votre séjour ?',
    es: '¡Hola! ¿En qué puedo ayudarle durante su estancia?',
  },
  pickATime: {
    en: 'Our restaurant by the water serves dinner from 6 to 10 pm. Pick a time and I will ask the front desk to hold a table, or book online.',
    de: 'Unser Restaurant am Wasser serviert das Abendessen von 18 bis 22 Uhr. Wählen Sie eine Uhrzeit, und ich lasse an der Rezeption einen Tisch reservieren, oder buchen Sie online.',
    fr: 'Notre restaurant au bord de l’eau sert le dîner de 18 h à 22 h. Choisissez une heure et je demande à la réception de vous garder une table, ou réservez en ligne.',
    es: 'Nuestro restaurante junto al agua sirve cenas de 18 a 22. Elija una hora y pediré a recepción que le guarde una mesa, o reserve en línea.',
  },
  tableAt: {
    en: (time: string) => `A table for two at ${time}, please.`,
    de: (time: string) => `Einen Tisch für zwei um ${time}, bitte.`,
    fr: (time: string) => `Une table pour deux à ${time}, s’il vous plaît.`,
    es: (time: string) => `Una mesa para dos a las ${time}, por favor.`,
  },
  tableHeld: {
    en: (time: string) =>
      `Done: a table for two at ${time} is held in your name at the restaurant by the water. The front desk will confirm it to your room; you can change it online.`,
    de: (time: string) =>
      `Erledigt: Ein Tisch für zwei um ${time} ist im Restaurant am Wasser auf Ihren Namen reserviert. Die Rezeption bestätigt es auf Ihr Zimmer; ändern können Sie es online.`,
    fr: (time: string) =>
      `C’est fait : une table pour deux à ${time} vous attend au restaurant au bord de l’eau. La réception vous le confirmera en chambre ; vous pouvez la modifier en ligne.`,
    es: (time: string) =>
      `Hecho: una mesa para dos a las ${time} queda reservada a su nombre en el restaurante junto al agua. Recepción se lo confirmará en su habitación; puede cambiarla en línea.`,
  },
  change: {
    en: 'Change the booking',
    de: 'Reservierung ändern',
    fr: 'Modifier la réservation',
    es: 'Cambiar la reserva',
  },
  bookOnline: { en: 'Book online', de: 'Online buchen', fr: 'Réserver en ligne', es: 'Reservar en línea' },
  rooms: {
    en: 'All twenty-four rooms look over the harbour. I have scrolled the page to them: the suites on the top floor have a balcony.',
    de: 'Alle vierundzwanzig Zimmer blicken auf den Hafen. Ich habe die Seite zu ihnen gescrollt: Die Suiten im obersten Stock haben einen Balkon.',
    fr: 'Les vingt-quatre chambres donnent sur le port. J’ai fait défiler la page jusqu’à elles : les suites du dernier étage ont un balcon.',
    es: 'Las veinticuatro habitaciones dan al puerto. He desplazado la página hasta ellas: las suites de la última planta tienen balcón.',
  },
  largeParty: {
    en: (n: string) =>
      `I see the booking form would not take a table for ${n}: online bookings stop at eight guests. I have asked the restaurant to arrange it with you here; someone will join in a moment.`,
    de: (n: string) =>
      `Ich sehe, das Formular hat einen Tisch für ${n} nicht angenommen: Online geht es bis acht Gäste. Ich habe das Restaurant gebeten, es hier mit Ihnen zu regeln; gleich kommt jemand dazu.`,
    fr: (n: string) =>
      `Je vois que le formulaire n’a pas accepté une table pour ${n} : en ligne, c’est huit personnes au plus. J’ai demandé au restaurant de s’en occuper ici avec vous ; quelqu’un arrive.`,
    es: (n: string) =>
      `Veo que el formulario no aceptó una mesa para ${n}: en línea se reserva hasta ocho personas. He pedido al restaurante que lo organice aquí con usted; enseguida le atienden.`,
  },
  passedOn: {
    en: (q: string) => `Good question. I have passed "${q}" on to the front desk; they can also help by phone on 9.`,
    de: (q: string) =>
      `Gute Frage. Ich habe „${q}“ an die Rezeption weitergegeben; dort hilft man Ihnen auch telefonisch unter der 9.`,
    fr: (q: string) => `Bonne question. J’ai transmis « ${q} » à la réception ; vous pouvez aussi l’appeler au 9.`,
    es: (q: string) => `Buena pregunta. He pasado «${q}» a la recepción; también pueden ayudarle por teléfono en el 9.`,
  },
} satisfies Record<string, InEach<string | ((value: string) => string)>>;

/** A reply as a language model writes it: a few words at a time (each part keeps its spaces). */
export function partsOf(text: string, wordsPerPart = 3): string[] {
  const words = text.match(/\S+\s*/g) ?? [text];
  const parts: string[] = [];
  for (let i = 0; i < words.length; i += wordsPerPart) parts.push(words.slice(i, i + wordsPerPart).join(''));
  return parts;
}
