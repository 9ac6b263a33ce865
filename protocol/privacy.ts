/**
 * What a deployment keeps of its conversations (README, Privacy: what is kept): every word, the
 * words with personal values replaced by their kind (`[phone]`), or no words at all.
 */
export const keepModes = ['everything', 'redacted', 'metadata'] as const;
export type KeepMode = (typeof keepModes)[number];

/** The values found by their own patterns and checks: a card by Luhn, an IBAN by its check digits, a phone number by its region's plan. */
export const patternKinds = ['email', 'phone', 'card', 'iban'] as const;
export type PatternKind = (typeof patternKinds)[number];

/** The values a model finds, where the deployment asks for them and its agent has a model to ask. */
export const modelKinds = ['name', 'address'] as const;
export type ModelKind = (typeof modelKinds)[number];

/** Every kind `redact` may name; absent, it is the pattern kinds. */
export const redactionKinds = [...patternKinds, ...modelKinds] as const;
export type RedactionKind = (typeof redactionKinds)[number];
