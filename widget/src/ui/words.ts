import { RIGHT_TO_LEFT, WIDGET_LOCALES, type WidgetLocale } from '#protocol/widget-locales';
import type en from '../../locales/en.json';
import { close_named, dismiss, open } from '../../locales/en.json';

/** The catalogues' version, set by the build: a catalogue fetched with it is cached for as long as the service serves it. */
declare const __CATALOGUE_VERSION__: string;

export type WordKey = keyof typeof en;
/** A string, or one per plural category of `Intl.PluralRules` (`other` always among them). */
type Entry = string | Partial<Record<Intl.LDMLPluralRule, string>>;
export type Catalogue = Partial<Record<WordKey, Entry>>;

// One widget runs per page (README, Putting the widget on a site): its words are the page's.
let locale: WidgetLocale = 'en';
// Every page carries only the launcher's English (and its teaser's); the panel brings the rest (`addEnglish`).
let english: Catalogue = { open, close_named, dismiss };
let words: Catalogue = english;
let wanted: WidgetLocale = 'en';

/** The whole English catalogue, from the panel's module: what any other locale falls back to. */
export function addEnglish(all: Catalogue): void {
  english = all;
  if (locale === 'en') words = all;
}

const pick = (entry: Entry | undefined, count: number | undefined): string | undefined =>
  typeof entry === 'object' ? (entry[new Intl.PluralRules(locale).select(count ?? 0)] ?? entry.other) : entry;

/**
 * A string in the widget's locale, falling back to English (never to its key); `{name}` takes
 * `vars.name`, and `vars.count` picks the plural form.
 */
export function t(key: WordKey, vars: Record<string, string | number> = {}): string {
  const text = pick(words[key], vars.count as number) ?? pick(english[key], vars.count as number)!;
  return text.replace(/\{(\w+)\}/g, (_, name: string) => String(vars[name]));
}

/** The locale of the words shown, and its direction. */
export const wordsLocale = (): WidgetLocale => locale;
export const rightToLeft = (): boolean => RIGHT_TO_LEFT.includes(locale);

/** The first of `tags` the widget has words for, matched by language, then script (`zh-TW` is not `zh-Hans`); else English. */
export function localeFor(tags: readonly (string | null | undefined)[]): WidgetLocale {
  for (const tag of tags) {
    try {
      const asked = new Intl.Locale(tag!).maximize();
      const found = WIDGET_LOCALES.find((have) => {
        const known = new Intl.Locale(have).maximize();
        return known.language === asked.language && known.script === asked.script;
      });
      if (found) return found;
    } catch {
      // not a language tag: the next one
    }
  }
  return 'en';
}

/**
 * Shows `next`'s words once its catalogue is fetched from the service (the words shown so far stay
 * while it loads; English if it cannot be). Of overlapping calls, the last one wins.
 */
export async function loadWords(next: WidgetLocale, baseUrl: string): Promise<void> {
  wanted = next;
  let loaded: Catalogue | undefined;
  if (next !== 'en') {
    try {
      const res = await fetch(`${baseUrl}/widget/locales/${next}.json?v=${__CATALOGUE_VERSION__}`);
      if (res.ok) loaded = (await res.json()) as Catalogue;
    } catch {
      // offline or blocked: English words
    }
  }
  if (wanted !== next) return;
  locale = loaded ? next : 'en';
  words = loaded ?? english;
}
