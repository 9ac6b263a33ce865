/**
 * What a deployment keeps of its conversations (README, Privacy: what is kept): every word, the
 * words with personal values replaced by their kind (`[phone]`), or no words at all.
 */
export const keepModes = ['everything', 'redacted', 'metadata'] as const;
export type KeepMode = (typeof keepModes)[number];

/** The values found by their own patterns and checks: a card by Luhn, an IBAN by its check digits, a phone number by its region's plan. */
export const redactionKinds = ['email', 'phone', 'card', 'iban'] as const;
export type RedactionKind = (typeof redactionKinds)[number];
