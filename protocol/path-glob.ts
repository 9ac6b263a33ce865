/**
 * A page path glob of a greeting rule (README, Greeting visitors first) as the expression it
 * matches whole paths with: `*` stands for any characters but `/`, `**` for any characters.
 * Undefined when the text is not such a glob. It has no imports: the widget matches paths with
 * the very function the service validates rules with.
 */
export function pathGlob(glob: string): RegExp | undefined {
  if (!/^\/[^\s?#]{0,199}$/.test(glob) || glob.includes('***')) return undefined;
  const pattern = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*\*?/g, (stars) => (stars.length > 1 ? '.*' : '[^/]*'));
  return new RegExp(`^${pattern}$`);
}
