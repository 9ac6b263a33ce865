/**
 * The locales the widget speaks (README, The widget in your visitors' languages). It has no imports:
 * the widget bundles this list from here, the service serves a catalogue for each, and the console
 * offers them for its preview.
 */
export const WIDGET_LOCALES = [
  'en',
  'es',
  'fr',
  'de',
  'it',
  'pt',
  'nl',
  'pl',
  'tr',
  'ru',
  'ja',
  'ko',
  'zh-Hans',
  'ar',
  'he',
] as const;
export type WidgetLocale = (typeof WIDGET_LOCALES)[number];

/** The locales written right to left: the panel is laid out mirrored for them. */
export const RIGHT_TO_LEFT: readonly WidgetLocale[] = ['ar', 'he'];
