/** Deeper JSON is refused before anything walks or serialises it (a 64 KiB size check included). */
export const MAX_JSON_DEPTH = 32;

export interface HygieneProblem {
  /** Where, as dotted keys from `root` (`body.draft_spec.a.0`). */
  path: string;
  message: string;
}

/**
 * The text hygiene of README, The management API for any input that arrived as JSON (an HTTP body, a query, a
 * WebSocket frame, a token's claims): no string or key holds U+0000 or an unpaired surrogate,
 * and nothing is nested deeper than {@link MAX_JSON_DEPTH}. Checked once, at the edge, on the
 * parsed value, so no rule per field can forget it and nothing reaches a store that would refuse
 * it (PostgreSQL rejects U+0000 in text; both stores would keep a lone surrogate as U+FFFD).
 * Returns the first problem, or undefined.
 */
export function jsonHygieneProblem(value: unknown, root: string): HygieneProblem | undefined {
  // The keys down to the problem, filled in on the way back up (innermost first): nothing is
  // built while walking input that is clean, which is almost all of it.
  const trail: string[] = [];
  const visit = (node: unknown, depth: number): string | undefined => {
    if (typeof node === 'string') return badText(node);
    if (typeof node !== 'object' || node === null) return undefined;
    if (depth >= MAX_JSON_DEPTH) return `nested deeper than ${MAX_JSON_DEPTH} levels`;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const problem = visit(node[i], depth + 1);
        if (problem) {
          trail.unshift(String(i));
          return problem;
        }
      }
      return undefined;
    }
    for (const key of Object.keys(node)) {
      const problem = badText(key) ?? visit((node as Record<string, unknown>)[key], depth + 1);
      if (problem) {
        trail.unshift(key);
        return problem;
      }
    }
    return undefined;
  };
  const message = visit(value, 0);
  return message ? { path: [root, ...trail].join('.'), message } : undefined;
}

function badText(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain the character U+0000';
  if (!text.isWellFormed()) return 'must not contain an unpaired UTF-16 surrogate';
  return undefined;
}
