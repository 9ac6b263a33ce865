/**
 * The handoff reason of a visitor's own request for a person (README, A person in the
 * conversation): what the API lists and the console recognises. It has no imports, so the console
 * bundles just this string.
 */
export const VISITOR_ASKED = 'The visitor asked for a person';
