import type { WidgetLocale } from '#protocol/widget-locales';

/** What the agent says while a tool it called has not answered, when the tool names no `filler` of its own. */
const ONE_MOMENT: Record<WidgetLocale, string> = {
  en: 'One moment…',
  es: 'Un momento…',
  fr: 'Un instant…',
  de: 'Einen Moment…',
  it: 'Un momento…',
  pt: 'Um momento…',
  nl: 'Een ogenblik…',
  pl: 'Chwileczkę…',
  tr: 'Bir dakika…',
  ru: 'Одну минуту…',
  ja: '少々お待ちください…',
  ko: '잠시만 기다려 주세요…',
  'zh-Hans': '请稍等…',
  ar: 'لحظة من فضلك…',
  he: 'רק רגע…',
};

/** The default filler in the conversation's language (by its language subtag; `zh` is `zh-Hans`), else English. */
export function oneMoment(language: string): string {
  const primary = language.split('-')[0]!.toLowerCase();
  const locale = (Object.keys(ONE_MOMENT) as WidgetLocale[]).find((l) => l.split('-')[0] === primary);
  return ONE_MOMENT[locale ?? 'en'];
}
