/*
 * What the widget and the service both check of the page (README, Greeting visitors first). It has
 * no imports: the widget bundles these from here, the very rules the service validates with.
 */

/** Bytes the JSON of a page event's `data` or of the page's context may take. */
export const PAGE_DATA_BYTES = 4096;
/** A page event's name, as `Concierge.trigger(name)` and a rule's `when.event` give it. */
export const PAGE_EVENT_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * A page path glob of a greeting rule (README, Greeting visitors first) as the expression it
 * matches whole paths with: `*` stands for any characters but `/`, `**` for any characters.
 * Undefined when the text is not such a glob.
 */
export function pathGlob(glob: string): RegExp | undefined {
  if (!/^\/[^\s?#]{0,199}$/.test(glob) || glob.includes('***')) return undefined;
  const pattern = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*\*?/g, (stars) => (stars.length > 1 ? '.*' : '[^/]*'));
  return new RegExp(`^${pattern}$`);
}
