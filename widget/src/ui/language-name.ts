/**
 * A language's name for itself, as a menu of `among` shows it: `de-DE` is "Deutsch", with its
 * region ("American English", "British English") only when another of the menu shares its language.
 */
export function languageName(tag: string, among: readonly string[]): string {
  const language = (t: string) => t.split('-')[0]!.toLowerCase();
  const shared = among.some((other) => other !== tag && language(other) === language(tag));
  const name = new Intl.DisplayNames([tag], { type: 'language' }).of(shared ? tag : language(tag)) ?? tag;
  return name.charAt(0).toLocaleUpperCase(tag) + name.slice(1);
}
