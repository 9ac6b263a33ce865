import {
  type CountryCode,
  findPhoneNumbersInText,
  isSupportedCountry,
  parsePhoneNumberFromString,
  type PhoneNumber,
} from 'libphonenumber-js/max';
import type { ModelKind, PatternKind, RedactionKind } from '#protocol/privacy';

/** A value found in a text: its kind and where it is, `end` exclusive. */
export interface Found {
  kind: RedactionKind;
  start: number;
  end: number;
}

/** A value a model found in what was said (a name, an address), redacted wherever it is said again. */
export interface KnownValue {
  kind: ModelKind;
  text: string;
}

/** What a text becomes once redacted, and how many values of each kind it held. */
export interface Redacted {
  text: string;
  counts: Partial<Record<RedactionKind, number>>;
}

// A card number is 13-19 digits, grouped by single spaces or dashes as people write them.
const CARD = /(?<![\p{L}\d-])\d(?:[ -]?\d){12,18}(?![\d-])/gu;
// Two letters, two check digits, then 11 to 30 letters and digits, in groups of four as printed or run together.
const IBAN = /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b/gi;
// Written as typed, or as a recogniser writes speech ("jane dot doe at example dot com").
const EMAIL = /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}/gu;
/** Runs of digits a text has checked by the phone-number library, at most (a matcher's run counting four): a few ms. */
const PHONE_CHECKS = 16;
// Where a phone number could be: digits with the spaces, dashes, dots, slashes and brackets people write them with.
const PHONE_CANDIDATE = /(?<![\p{L}\d])[+(]?\d[\d \-.()/\u00A0]{4,24}\d(?![\p{L}\d])/gu;
const SPOKEN_EMAIL =
  /\b[\p{L}\p{N}]+(?: dot [\p{L}\p{N}]+)* at [\p{L}\p{N}-]+(?: dot [\p{L}\p{N}-]+)* dot (?:com|org|net|edu|gov|io|co|uk|de|fr|es|it|nl|eu)\b/giu;

/** The Luhn checksum every payment card number carries. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let d = digits.charCodeAt(digits.length - 1 - i) - 48;
    if (i % 2 === 1) d = d * 2 > 9 ? d * 2 - 9 : d * 2;
    sum += d;
  }
  return sum % 10 === 0;
}

/** The ISO 13616 check: the country and check digits moved to the end, letters as numbers, mod 97 is 1. */
export function ibanValid(compact: string): boolean {
  const moved = compact.slice(4) + compact.slice(0, 4);
  let rest = 0;
  for (const ch of moved) {
    const code = ch.charCodeAt(0);
    const value = code >= 65 ? code - 55 : code - 48;
    rest = (value > 9 ? rest * 100 + value : rest * 10 + value) % 97;
  }
  return rest === 1;
}

function cards(text: string): Found[] {
  const found: Found[] = [];
  for (const m of text.matchAll(CARD)) {
    const digits = m[0].replace(/[ -]/g, '');
    // Mixed separators, or a lone space inside a long run, read as two numbers, not one card.
    if (digits.length >= 13 && luhnValid(digits) && /^\d+(?:([ -])\d+(?:\1\d+)*)?$/.test(m[0]))
      found.push({ kind: 'card', start: m.index, end: m.index + m[0].length });
  }
  return found;
}

function ibans(text: string): Found[] {
  const found: Found[] = [];
  for (const m of text.matchAll(IBAN)) {
    // Printed in groups, the pattern may run on into the next word ("… 1332 thans"): a group fewer until it checks.
    const groups = m[0].split(' ');
    for (let n = groups.length; n > 0; n--) {
      const candidate = groups.slice(0, n).join(' ');
      const compact = candidate.replace(/ /g, '').toUpperCase();
      if (compact.length < 15) break;
      if (compact.length <= 34 && ibanValid(compact)) {
        found.push({ kind: 'iban', start: m.index, end: m.index + candidate.length });
        break;
      }
    }
  }
  return found;
}

function emails(text: string): Found[] {
  const found: Found[] = [];
  if (text.includes('@'))
    for (const m of text.matchAll(EMAIL)) found.push({ kind: 'email', start: m.index, end: m.index + m[0].length });
  if (/ at /i.test(text) && / dot /i.test(text))
    for (const m of text.matchAll(SPOKEN_EMAIL))
      found.push({ kind: 'email', start: m.index, end: m.index + m[0].length });
  return found;
}

/**
 * Phone numbers as the phone-number library reads them for `region`: only a number valid there
 * (or anywhere, written with its `+` country code) counts, so an order number, a price, a date or a
 * room number stays.
 */
function phones(text: string, region: CountryCode | undefined, taken: readonly Found[]): Found[] {
  const found: Found[] = [];
  // The library's matcher is slow (a card's digits cost it 0.2 ms): it is given only the runs of
  // digits a number could be, that no card or IBAN already holds.
  let checks = 0;
  for (const m of text.matchAll(PHONE_CANDIDATE)) {
    const digits = m[0].match(/\d/g)?.length ?? 0;
    if (digits < 7 || overlaps(taken, m.index, m.index + m[0].length)) continue;
    // A text of runs of digits (4,000 characters of them cost the library 100 ms) is checked up to a
    // budget; past it a run is taken as a number unchecked: more redacted, never a number kept.
    if (++checks > PHONE_CHECKS) {
      found.push({ kind: 'phone', start: m.index, end: m.index + m[0].length });
      continue;
    }
    // Most runs are one number or none: parsed whole, a fraction of the matcher's time.
    const whole = parsePhoneNumberFromString(m[0], region);
    if (whole?.isValid() && writtenAsPhone(m[0], whole)) {
      found.push({ kind: 'phone', start: m.index, end: m.index + m[0].length });
      continue;
    }
    // A run longer than a national number may hold one beside other digits (`room 412 415-555-2671`, two numbers).
    if (digits <= 11) continue;
    checks += 3; // the matcher costs about four parses
    for (const n of findPhoneNumbersInText(m[0], region ? { defaultCountry: region } : {}))
      if (writtenAsPhone(m[0].slice(n.startsAt, n.endsAt), n.number))
        found.push({ kind: 'phone', start: m.index + n.startsAt, end: m.index + n.endsAt });
  }
  return found;
}

/**
 * Whether digits the library reads as a valid number were written as people write that number:
 * with its `+` country code; with the trunk prefix its region dials (`030 …` in Germany, so
 * `20261128` is an order number); a mobile without it (`98765 43210` in India); or, where the region
 * has no prefix, grouped as its numbers are (`415-555-2671`, never `2026-004512`).
 */
function writtenAsPhone(raw: string, number: PhoneNumber): boolean {
  if (raw.startsWith('+')) return true;
  const digits = raw.replace(/\D/g, '');
  const national = number.formatNational();
  const nationalDigits = national.replace(/\D/g, '');
  if (digits === nationalDigits) return nationalDigits !== number.nationalNumber || groupedWithin(raw, national);
  return digits === number.nationalNumber && number.getType() === 'MOBILE';
}

/** Whether every break between `raw`'s groups of digits falls where `formatted` breaks too. */
function groupedWithin(raw: string, formatted: string): boolean {
  const breaks = (s: string) => {
    const at = new Set<number>();
    let digits = 0;
    for (let i = 0; i < s.length; i++) {
      const digit = s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57;
      if (digit) digits++;
      else if (digits) at.add(digits);
    }
    at.delete(digits);
    return at;
  };
  const allowed = breaks(formatted);
  return [...breaks(raw)].every((b) => allowed.has(b));
}

/** The region a conversation's language points at: its own (`en-GB`), else the country most of its speakers call from. */
export function regionOf(language: string | undefined): CountryCode | undefined {
  if (!language) return undefined;
  const [lang, ...rest] = language.split(/[-_]/);
  const region = rest.find((part) => /^[A-Za-z]{2}$/.test(part))?.toUpperCase();
  if (region && isSupportedCountry(region)) return region;
  return LANGUAGE_REGIONS[lang!.toLowerCase()];
}

const LANGUAGE_REGIONS: Record<string, CountryCode> = {
  en: 'US',
  de: 'DE',
  fr: 'FR',
  es: 'ES',
  it: 'IT',
  nl: 'NL',
  pt: 'BR',
  pl: 'PL',
  sv: 'SE',
  da: 'DK',
  nb: 'NO',
  fi: 'FI',
  cs: 'CZ',
  ja: 'JP',
  ko: 'KR',
  zh: 'CN',
  tr: 'TR',
  el: 'GR',
  hu: 'HU',
  ro: 'RO',
};

const overlaps = (taken: readonly Found[], start: number, end: number) =>
  taken.some((t) => start < t.end && t.start < end);

const DETECTORS: Record<
  PatternKind,
  (text: string, region: CountryCode | undefined, taken: readonly Found[]) => Found[]
> = {
  card: cards,
  iban: ibans,
  email: emails,
  phone: phones,
};

/**
 * Finds the values of `kinds` in `text`, and the `known` values of those kinds wherever they stand
 * (any case), the first kind in this order winning an overlap: an IBAN holds digits a card or a phone
 * number could be read in, a card digits a phone number could; a known value comes last.
 */
export function findValues(
  text: string,
  kinds: readonly RedactionKind[],
  region?: CountryCode,
  known: readonly KnownValue[] = [],
): Found[] {
  const taken: Found[] = [];
  for (const kind of ['iban', 'card', 'email', 'phone'] as const) {
    if (!kinds.includes(kind)) continue;
    for (const f of DETECTORS[kind](text, region, taken)) if (!overlaps(taken, f.start, f.end)) taken.push(f);
  }
  const lower = text.toLowerCase();
  // Longest first: "Ada Lovelace" before "Ada".
  for (const value of [...known].sort((a, b) => b.text.length - a.text.length)) {
    if (!kinds.includes(value.kind)) continue;
    const needle = value.text.toLowerCase();
    for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, at + needle.length))
      if (!overlaps(taken, at, at + needle.length))
        taken.push({ kind: value.kind, start: at, end: at + needle.length });
  }
  return taken.sort((a, b) => a.start - b.start);
}

/** `text` with each value found replaced by its kind in brackets (`[phone]`), and the counts. */
export function redactValues(text: string, found: readonly Found[]): Redacted {
  if (!found.length) return { text, counts: {} };
  const counts: Redacted['counts'] = {};
  let out = '';
  let at = 0;
  for (const f of found) {
    out += `${text.slice(at, f.start)}[${f.kind}]`;
    at = f.end;
    counts[f.kind] = (counts[f.kind] ?? 0) + 1;
  }
  return { text: out + text.slice(at), counts };
}

/** {@link findValues} then {@link redactValues}. */
export const redact = (
  text: string,
  kinds: readonly RedactionKind[],
  region?: CountryCode,
  known: readonly KnownValue[] = [],
): Redacted => redactValues(text, findValues(text, kinds, region, known));
