// What the deployment form checks before the service would refuse it.

/** What is wrong with the widget's menu languages (README, The widget in your visitors' languages): tags that are not BCP 47, one named twice, more than 20. */
export function languageProblems(tags: string[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const tag of tags) {
    let canonical: string | undefined;
    try {
      canonical = Intl.getCanonicalLocales(tag)[0];
    } catch {
      problems.push(`${tag} is not a language tag such as de-DE or en-GB`);
      continue;
    }
    if (seen.has(canonical!)) problems.push(`${tag} is named twice`);
    seen.add(canonical!);
  }
  if (tags.length > 20) problems.push(`At most 20 languages (${tags.length} given)`);
  return problems;
}

/** A locale as its own speakers name it, with its tag: "Deutsch (de)". */
export const localeLabel = (locale: string): string =>
  `${new Intl.DisplayNames([locale], { type: 'language' }).of(locale)} (${locale})`;

/** Problems with an allowed-origins list; an empty list is allowed but worth a warning. */
export function originProblems(origins: string[]): string[] {
  if (!origins.length) return ['The list is empty: a page on any site can open sessions with this deployment.'];
  const problems: string[] = [];
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      // reported below
    }
    if (!parsed || parsed.origin !== origin)
      problems.push(`${origin} is not an origin (scheme://host[:port], no path or trailing slash)`);
  }
  return problems;
}
