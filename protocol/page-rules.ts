/*
 * What the widget and the service both check of the page (README, Greeting visitors first). It has
 * no imports: the widget bundles these from here, the very rules the service validates with.
 */

/** Bytes the JSON of a page event's `data` or of the page's context may take. */
export const PAGE_DATA_BYTES = 4096;
/** A page event's name, as `Concierge.trigger(name)` and a rule's `when.event` give it. */
export const PAGE_EVENT_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

/** Whether a page path matches a greeting rule's glob. */
export interface PathMatcher {
  test(path: string): boolean;
}

/**
 * A page path glob of a greeting rule (README, Greeting visitors first), matching whole paths: `*`
 * stands for any characters but `/`, `**` for any characters. Undefined when the text is not such
 * a glob. The path is read once, every place in the glob it may have reached kept at each step (no
 * backtracking: ten `**` in a row held a visitor's tab for seconds as a regular expression).
 */
export function pathGlob(glob: string): PathMatcher | undefined {
  if (!/^\/[^\s?#]{0,199}$/.test(glob) || glob.includes('***')) return undefined;
  // A character to match, or 1 (`*`) or 2 (`**`).
  const tokens: (string | 1 | 2)[] = [];
  for (let i = 0; i < glob.length; i++) tokens.push(glob[i] !== '*' ? glob[i]! : glob[i + 1] === '*' ? (i++, 2) : 1);
  // A star may match nothing: where it stands, the place after it is reached too.
  const through = (at: boolean[]) => {
    for (let i = 0; i < tokens.length; i++) if (at[i] && typeof tokens[i] === 'number') at[i + 1] = true;
    return at;
  };
  return {
    test(path) {
      let at = through([true]);
      for (let c = 0; c < path.length; c++) {
        const next: boolean[] = [];
        tokens.forEach((token, i) => {
          if (!at[i]) return;
          if (token === path[c]) next[i + 1] = true;
          else if (token === 2 || (token === 1 && path[c] !== '/')) next[i] = true;
        });
        at = through(next);
      }
      return at[tokens.length] === true;
    },
  };
}
