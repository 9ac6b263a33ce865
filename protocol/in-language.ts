/**
 * Words given once per language (`{"en": "Hello", "de": "Hallo"}`) or once for all (a string): a
 * greeting rule's teaser, an agent's greeting (README, The widget in your visitors' languages).
 * No schema here: the widget's bundle takes this file alone.
 */
export type InLanguages = string | Readonly<Record<string, string>>;

/**
 * `text` in the first of `tags` it has words for (the tag itself, else its language: `de-AT`
 * takes `de`), else English, else its first language.
 */
export function inLanguage(text: InLanguages, tags: readonly (string | null | undefined)[]): string {
  if (typeof text === 'string') return text;
  const keys = Object.keys(text);
  const language = (tag: string) => tag.toLowerCase().split('-')[0];
  for (const tag of [...tags, 'en'])
    if (tag) {
      const key =
        keys.find((k) => k.toLowerCase() === tag.toLowerCase()) ?? keys.find((k) => language(k) === language(tag));
      if (key) return text[key]!;
    }
  return text[keys[0]!]!;
}
