import type { WidgetLocale } from '#protocol/widget-locales';

/**
 * What the service itself says in a conversation, in its language: the filler while a model's tool
 * works (README, An agent without a server), the knowledge responder's words (README, Answers
 * from your documents), and the question to a quiet hands-free visitor (README, Hands-free voice).
 */
export interface ServiceWords {
  /** Said while a tool has not answered, when the tool names no filler of its own. */
  oneMoment: string;
  /** Nothing in the knowledge base answers the question. */
  unknown: string;
  /** The quick reply that asks for a person: its label, and the turn it sends. */
  askLabel: string;
  ask: string;
  /** The answer to that turn: the conversation now waits for a person. */
  handedOver: string;
  /** Asked once of a hands-free visitor who went quiet (README, Hands-free voice). */
  stillThere: string;
  /** Said instead of a reply a guardrail stopped, when the agent names no `refuse_text` (README, Variables and guardrails). */
  refusal: string;
}

const WORDS: Record<WidgetLocale, ServiceWords> = {
  en: {
    oneMoment: 'One moment…',
    unknown: "I'm sorry, I don't know that.",
    askLabel: 'Talk to a person',
    ask: 'I would like to talk to a person.',
    handedOver: 'A person from the team will answer you here.',
    stillThere: 'Are you still there?',
    refusal: "I'm sorry, I can't help with that here.",
  },
  es: {
    oneMoment: 'Un momento…',
    unknown: 'Lo siento, no lo sé.',
    askLabel: 'Hablar con una persona',
    ask: 'Me gustaría hablar con una persona.',
    handedOver: 'Una persona del equipo te responderá aquí.',
    stillThere: '¿Sigues ahí?',
    refusal: 'Lo siento, no puedo ayudarte con eso aquí.',
  },
  fr: {
    oneMoment: 'Un instant…',
    unknown: 'Désolé, je ne le sais pas.',
    askLabel: 'Parler à une personne',
    ask: "J'aimerais parler à une personne.",
    handedOver: "Une personne de l'équipe vous répondra ici.",
    stillThere: 'Vous êtes toujours là ?',
    refusal: 'Désolé, je ne peux pas vous aider avec cela ici.',
  },
  de: {
    oneMoment: 'Einen Moment…',
    unknown: 'Das weiß ich leider nicht.',
    askLabel: 'Mit einer Person sprechen',
    ask: 'Ich möchte mit einer Person sprechen.',
    handedOver: 'Jemand aus dem Team antwortet Ihnen hier.',
    stillThere: 'Sind Sie noch da?',
    refusal: 'Dabei kann ich Ihnen hier leider nicht helfen.',
  },
  it: {
    oneMoment: 'Un momento…',
    unknown: 'Mi dispiace, non lo so.',
    askLabel: 'Parla con una persona',
    ask: 'Vorrei parlare con una persona.',
    handedOver: 'Una persona del team ti risponderà qui.',
    stillThere: 'Sei ancora lì?',
    refusal: 'Mi dispiace, qui non posso aiutarti con questo.',
  },
  pt: {
    oneMoment: 'Um momento…',
    unknown: 'Desculpe, não sei.',
    askLabel: 'Falar com uma pessoa',
    ask: 'Gostaria de falar com uma pessoa.',
    handedOver: 'Uma pessoa da equipe vai responder aqui.',
    stillThere: 'Você ainda está aí?',
    refusal: 'Desculpe, não posso ajudar com isso aqui.',
  },
  nl: {
    oneMoment: 'Een ogenblik…',
    unknown: 'Sorry, dat weet ik niet.',
    askLabel: 'Met iemand praten',
    ask: 'Ik wil graag met iemand praten.',
    handedOver: 'Iemand van het team antwoordt je hier.',
    stillThere: 'Bent u er nog?',
    refusal: 'Sorry, daarmee kan ik je hier niet helpen.',
  },
  pl: {
    oneMoment: 'Chwileczkę…',
    unknown: 'Przepraszam, nie wiem.',
    askLabel: 'Porozmawiaj z osobą',
    ask: 'Chciałbym porozmawiać z osobą.',
    handedOver: 'Osoba z zespołu odpowie tutaj.',
    stillThere: 'Czy nadal tam jesteś?',
    refusal: 'Przepraszam, nie mogę w tym tutaj pomóc.',
  },
  tr: {
    oneMoment: 'Bir dakika…',
    unknown: 'Üzgünüm, bunu bilmiyorum.',
    askLabel: 'Bir kişiyle konuş',
    ask: 'Bir kişiyle konuşmak istiyorum.',
    handedOver: 'Ekipten biri size burada yanıt verecek.',
    stillThere: 'Hâlâ orada mısınız?',
    refusal: 'Üzgünüm, bu konuda burada yardımcı olamam.',
  },
  ru: {
    oneMoment: 'Одну минуту…',
    unknown: 'К сожалению, я этого не знаю.',
    askLabel: 'Поговорить с человеком',
    ask: 'Я хотел бы поговорить с человеком.',
    handedOver: 'Сотрудник ответит вам здесь.',
    stillThere: 'Вы ещё здесь?',
    refusal: 'К сожалению, здесь я не могу с этим помочь.',
  },
  ja: {
    oneMoment: '少々お待ちください…',
    unknown: '申し訳ありませんが、わかりません。',
    askLabel: 'スタッフと話す',
    ask: 'スタッフと話したいです。',
    handedOver: 'スタッフがここでお答えします。',
    stillThere: 'まだいらっしゃいますか？',
    refusal: '申し訳ありませんが、ここではその件についてお手伝いできません。',
  },
  ko: {
    oneMoment: '잠시만 기다려 주세요…',
    unknown: '죄송하지만 잘 모르겠습니다.',
    askLabel: '상담원과 대화',
    ask: '상담원과 이야기하고 싶어요.',
    handedOver: '담당자가 여기에서 답변해 드립니다.',
    stillThere: '아직 계신가요?',
    refusal: '죄송하지만 여기에서는 그 일을 도와드릴 수 없습니다.',
  },
  'zh-Hans': {
    oneMoment: '请稍等…',
    unknown: '抱歉，我不知道。',
    askLabel: '联系工作人员',
    ask: '我想和工作人员交谈。',
    handedOver: '工作人员会在这里回复您。',
    stillThere: '您还在吗？',
    refusal: '抱歉，我无法在这里帮您处理这件事。',
  },
  ar: {
    oneMoment: 'لحظة من فضلك…',
    unknown: 'عذرًا، لا أعرف ذلك.',
    askLabel: 'التحدث إلى شخص',
    ask: 'أود التحدث إلى شخص.',
    handedOver: 'سيرد عليك أحد أعضاء الفريق هنا.',
    stillThere: 'هل ما زلت هنا؟',
    refusal: 'عذرًا، لا أستطيع المساعدة في ذلك هنا.',
  },
  he: {
    oneMoment: 'רק רגע…',
    unknown: 'מצטער, אני לא יודע.',
    askLabel: 'לדבר עם נציג',
    ask: 'אני רוצה לדבר עם נציג.',
    handedOver: 'נציג מהצוות יענה לך כאן.',
    stillThere: 'אתה עדיין כאן?',
    refusal: 'מצטער, אני לא יכול לעזור בזה כאן.',
  },
};

/** The words in the conversation's language (by its language subtag; `zh` is `zh-Hans`), else English. */
export function serviceWords(language: string): ServiceWords {
  const primary = language.split('-')[0]!.toLowerCase();
  const locale = (Object.keys(WORDS) as WidgetLocale[]).find((l) => l.split('-')[0] === primary);
  return WORDS[locale ?? 'en'];
}
