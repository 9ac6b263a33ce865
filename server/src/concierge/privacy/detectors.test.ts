import { describe, expect, it } from 'vitest';
import { patternKinds } from '#protocol/privacy';
import { ibanValid, luhnValid, redact, regionOf } from './detectors.js';

/** One case: a text in a language, and what it is stored as with every kind redacted. */
type Case = [language: string, said: string, stored: string];

// Test numbers the card networks publish: each passes Luhn.
const CARDS = [
  ['4111111111111111', '4111 1111 1111 1111'],
  ['4012888888881881', '4012 8888 8888 1881'],
  ['4222222222222', '4222 2222 22222'],
  ['5555555555554444', '5555 5555 5555 4444'],
  ['5105105105105100', '5105 1051 0510 5100'],
  ['2223003122003222', '2223 0031 2200 3222'],
  ['378282246310005', '3782 822463 10005'],
  ['371449635398431', '3714 496353 98431'],
  ['6011111111111117', '6011 1111 1111 1117'],
  ['6011000990139424', '6011 0009 9013 9424'],
  ['3530111333300000', '3530 1113 3330 0000'],
  ['3566002020360505', '3566 0020 2036 0505'],
  ['30569309025904', '3056 930902 5904'],
  ['6200000000000005', '6200 0000 0000 0005'],
] as const;

// IBANs as the banks' registries print them: each passes its check digits.
const IBANS = [
  ['de', 'DE89370400440532013000', 'DE89 3704 0044 0532 0130 00'],
  ['en-GB', 'GB82WEST12345698765432', 'GB82 WEST 1234 5698 7654 32'],
  ['fr', 'FR1420041010050500013M02606', 'FR14 2004 1010 0505 0001 3M02 606'],
  ['es', 'ES9121000418450200051332', 'ES91 2100 0418 4502 0005 1332'],
  ['it', 'IT60X0542811101000000123456', 'IT60 X054 2811 1010 0000 0123 456'],
  ['nl', 'NL91ABNA0417164300', 'NL91 ABNA 0417 1643 00'],
  ['fr-BE', 'BE68539007547034', 'BE68 5390 0754 7034'],
  ['de-CH', 'CH9300762011623852957', 'CH93 0076 2011 6238 5295 7'],
  ['de-AT', 'AT611904300234573201', 'AT61 1904 3002 3457 3201'],
  ['pl', 'PL61109010140000071219812874', 'PL61 1090 1014 0000 0712 1981 2874'],
  ['sv', 'SE4550000000058398257466', 'SE45 5000 0000 0583 9825 7466'],
  ['da', 'DK5000400440116243', 'DK50 0040 0440 1162 43'],
  ['nb', 'NO9386011117947', 'NO93 8601 1117 947'],
  ['fi', 'FI2112345600000785', 'FI21 1234 5600 0007 85'],
  ['en-IE', 'IE29AIBK93115212345678', 'IE29 AIBK 9311 5212 3456 78'],
  ['pt', 'PT50000201231234567890154', 'PT50 0002 0123 1234 5678 9015 4'],
] as const;

const PHONES: Case[] = [
  ['en-US', 'Call me at (415) 555-2671 tonight', 'Call me at [phone] tonight'],
  ['en-US', 'my cell is 415-555-2671', 'my cell is [phone]'],
  ['en-US', 'reach me on +1 415 555 2671', 'reach me on [phone]'],
  ['en-US', 'it is 415.555.2671', 'it is [phone]'],
  ['en', 'text 212 555 0198 please', 'text [phone] please'],
  ['en-GB', 'ring 020 7946 0958 after six', 'ring [phone] after six'],
  ['en-GB', 'mobile 07911 123456', 'mobile [phone]'],
  ['en-GB', 'from abroad +44 20 7946 0958', 'from abroad [phone]'],
  ['de', 'Ruf mich an: 030 12345678', 'Ruf mich an: [phone]'],
  ['de', 'Handy 0151 23456789', 'Handy [phone]'],
  ['de-DE', 'Tel. +49 30 12345678', 'Tel. [phone]'],
  ['fr', 'Appelez le 06 12 34 56 78', 'Appelez le [phone]'],
  ['fr', 'ou le 01 23 45 67 89', 'ou le [phone]'],
  ['fr-FR', 'mon numéro +33 6 12 34 56 78', 'mon numéro [phone]'],
  ['es', 'Llámame al 612 34 56 78', 'Llámame al [phone]'],
  ['es-ES', 'móvil +34 612 345 678', 'móvil [phone]'],
  ['it', 'chiamami al 333 123 4567', 'chiamami al [phone]'],
  ['it-IT', 'ufficio +39 06 1234 5678', 'ufficio [phone]'],
  ['nl', 'bel 06 12345678', 'bel [phone]'],
  ['nl-NL', 'kantoor +31 20 123 4567', 'kantoor [phone]'],
  ['ja', '電話は 03-1234-5678 です', '電話は [phone] です'],
  ['ja-JP', '携帯 090-1234-5678', '携帯 [phone]'],
  ['pt-BR', 'Meu celular é (11) 91234-5678', 'Meu celular é [phone]'],
  ['en-AU', 'call 0412 345 678', 'call [phone]'],
  ['en-US', 'a UK number +44 7911 123456 too', 'a UK number [phone] too'],
  ['de', 'Rückruf an +1 415 555 2671', 'Rückruf an [phone]'],
  ['en-IN', 'my number 98765 43210', 'my number [phone]'],
  ['en-CA', 'Toronto office 416-555-0133', 'Toronto office [phone]'],
  ['en-US', 'room 412 415-555-2671 please', 'room 412 [phone] please'],
];

const EMAILS: Case[] = [
  ['en', 'mail jane.doe@example.com', 'mail [email]'],
  ['en', 'JANE_DOE+hotel@Example.co.uk is mine', '[email] is mine'],
  ['de', 'schreib an max.mustermann@beispiel.de bitte', 'schreib an [email] bitte'],
  ['fr', 'écrivez à élodie@exemple.fr', 'écrivez à [email]'],
  ['en', 'a@b.io', '[email]'],
  ['en', 'contact: booking-desk@grand-hotel.example.org.', 'contact: [email].'],
  ['en', 'john dot smith at gmail dot com', '[email]'],
  ['en', 'it is maria at example dot org thanks', 'it is [email] thanks'],
  ['en', 'two: a1@x.com, b2@y.net', 'two: [email], [email]'],
  ['es', 'mi correo es ana.garcia@correo.es', 'mi correo es [email]'],
];

/** Things that look like values and must survive: prices, dates, orders, rooms, times, codes. */
const LOOK_ALIKES: Case[] = [
  ['en', 'order 12345678 is late', 'order 12345678 is late'],
  ['en', 'order #A-1029384', 'order #A-1029384'],
  ['en', 'it costs $1,299.00', 'it costs $1,299.00'],
  ['de', 'kostet 2.499,00 €', 'kostet 2.499,00 €'],
  ['en', 'arriving 2026-11-28', 'arriving 2026-11-28'],
  ['en-GB', 'arriving 28/11/2026', 'arriving 28/11/2026'],
  ['en-US', 'leaving 11.30.2026', 'leaving 11.30.2026'],
  ['en', 'room 412 please', 'room 412 please'],
  ['en', 'breakfast from 7:00 to 10:30', 'breakfast from 7:00 to 10:30'],
  ['en-US', 'ZIP 94103', 'ZIP 94103'],
  ['en-GB', 'postcode SW1A 1AA', 'postcode SW1A 1AA'],
  ['en', '3 nights for 2 adults and 1 child', '3 nights for 2 adults and 1 child'],
  ['en', 'flight BA 117 lands at 14:05', 'flight BA 117 lands at 14:05'],
  ['en', 'booking ref 8F3K2L', 'booking ref 8F3K2L'],
  ['en', 'version 1.13.16', 'version 1.13.16'],
  ['en', 'ISBN 978-3-16-148410-0', 'ISBN 978-3-16-148410-0'],
  ['en', 'weighs 1.5 kg', 'weighs 1.5 kg'],
  ['en', 'server 192.168.0.1', 'server 192.168.0.1'],
  ['en', 'tracking 1Z999AA10123456784', 'tracking 1Z999AA10123456784'],
  ['en', 'invoice 2026-004512', 'invoice 2026-004512'],
  ['en', 'PIN 1234', 'PIN 1234'],
  ['en', 'born in 1999', 'born in 1999'],
  ['en', 'extension 4412', 'extension 4412'],
  ['en', 'table for 6 at 19:30', 'table for 6 at 19:30'],
  ['en', 'reservation 5551234', 'reservation 5551234'],
  ['en', 'between 10 and 20 people', 'between 10 and 20 people'],
  ['en', '@concierge on social', '@concierge on social'],
  ['en', 'meet me at the bar at 8', 'meet me at the bar at 8'],
  ['en', 'the score was 3-1', 'the score was 3-1'],
  ['en', 'page 12 of 40', 'page 12 of 40'],
  ['en', 'a 15% discount on 2 rooms', 'a 15% discount on 2 rooms'],
  ['en', 'order 4111111111111112', 'order 4111111111111112'],
  ['en', 'serial 1234-5678-9012-3456', 'serial 1234-5678-9012-3456'],
  ['de', 'Zimmer 1204 im 12. Stock', 'Zimmer 1204 im 12. Stock'],
  ['de', 'am 24.12.2026 um 18 Uhr', 'am 24.12.2026 um 18 Uhr'],
  ['de', 'Bestellnummer 20261128', 'Bestellnummer 20261128'],
  ['fr', 'le 28/11/2026 à 20h30', 'le 28/11/2026 à 20h30'],
  ['fr', 'chambre 305, 2 nuits, 340 €', 'chambre 305, 2 nuits, 340 €'],
  ['es', 'pedido 99887766', 'pedido 99887766'],
  ['ja', '部屋は 1203 号室', '部屋は 1203 号室'],
  ['en', 'code DE12 is not an IBAN', 'code DE12 is not an IBAN'],
  ['en', 'GB00 WEST 1234 5698 7654 32', 'GB00 WEST 1234 5698 7654 32'],
  ['en', 'coordinates 51.5074, -0.1278', 'coordinates 51.5074, -0.1278'],
  ['en', 'at dot com prices', 'at dot com prices'],
  ['en', '', ''],
];

const MIXED: Case[] = [
  [
    'en-GB',
    'Book for Jane, jane@example.com, 07911 123456, card 4111 1111 1111 1111, room 412 on 28/11',
    'Book for Jane, [email], [phone], card [card], room 412 on 28/11',
  ],
  [
    'de',
    'Überweisung von DE89 3704 0044 0532 0130 00, Rückfragen unter 030 12345678, Bestellung 20261128',
    'Überweisung von [iban], Rückfragen unter [phone], Bestellung 20261128',
  ],
  ['en-US', 'card 5555-5555-5555-4444 exp 12/28 cvc 123', 'card [card] exp 12/28 cvc 123'],
  ['fr', 'IBAN FR1420041010050500013M02606 et tél 06 12 34 56 78', 'IBAN [iban] et tél [phone]'],
];

const cases: Case[] = [
  ...CARDS.flatMap(([compact, grouped]): Case[] => [
    ['en', `my card is ${compact}`, 'my card is [card]'],
    ['en', `card: ${grouped}.`, 'card: [card].'],
    ['de', `Karte ${grouped.replace(/ /g, '-')} bitte`, 'Karte [card] bitte'],
    // One digit off fails Luhn: an order number, not a card (and too long for any phone).
    [
      'en',
      `ref ${compact.slice(0, -1)}${(Number(compact.at(-1)) + 1) % 10}`,
      `ref ${compact.slice(0, -1)}${(Number(compact.at(-1)) + 1) % 10}`,
    ],
  ]),
  ...IBANS.flatMap(([language, compact, grouped]): Case[] => {
    const wrong = `${compact.slice(0, 2)}${String((Number(compact.slice(2, 4)) + 1) % 100).padStart(2, '0')}${compact.slice(4)}`;
    return [
      [language, `IBAN ${compact}`, 'IBAN [iban]'],
      [language, `to ${grouped} thanks`, 'to [iban] thanks'],
      [language, `to ${compact.toLowerCase()}`, 'to [iban]'],
      // Wrong check digits: not an IBAN.
      [language, `code ${wrong}`, `code ${wrong}`],
    ];
  }),
  ...PHONES,
  ...EMAILS,
  ...LOOK_ALIKES,
  ...MIXED,
];

describe('detectors: every kind, in several locales, and the look-alikes that stay', () => {
  it('holds at least 200 cases', () => {
    expect(cases.length).toBeGreaterThanOrEqual(200);
  });

  it.each(cases)('%s: %s', (language, said, stored) => {
    expect(redact(said, patternKinds, regionOf(language)).text).toBe(stored);
  });

  it('counts what it took out, by kind', () => {
    expect(redact(MIXED[0]![1], patternKinds, 'GB').counts).toEqual({ email: 1, phone: 1, card: 1 });
    expect(redact('a@b.io and c@d.io', patternKinds).counts).toEqual({ email: 2 });
  });

  it('redacts only the kinds asked for', () => {
    const said = 'jane@example.com, 4111 1111 1111 1111, +44 20 7946 0958';
    expect(redact(said, ['card'], 'GB').text).toBe('jane@example.com, [card], +44 20 7946 0958');
    expect(redact(said, ['email', 'phone'], 'GB').text).toBe('[email], 4111 1111 1111 1111, [phone]');
  });

  it('redacts the names and addresses a model found wherever they are said again, in any case, longest first', () => {
    const known = [
      { kind: 'name' as const, text: 'Ada' },
      { kind: 'name' as const, text: 'Ada Lovelace' },
      { kind: 'address' as const, text: '12 Harbour Street' },
    ];
    expect(redact('Ada? ADA LOVELACE of 12 harbour street', ['name', 'address'], undefined, known)).toEqual({
      text: '[name]? [name] of [address]',
      counts: { name: 2, address: 1 },
    });
    // A kind the deployment does not ask for stays.
    expect(redact('Ada of 12 Harbour Street', ['name'], undefined, known).text).toBe('[name] of 12 Harbour Street');
  });

  it('checks a bounded number of digit runs a text, taking the rest as numbers: more redacted, none kept', () => {
    const decoys = Array.from({ length: 40 }, (_, i) => `order ${20261100 + i}`).join(', ');
    const { text } = redact(`${decoys}, call me on 415-555-2671`, patternKinds, 'US');
    expect(text.startsWith('order 20261100, order 20261101,')).toBe(true);
    expect(text.endsWith('order [phone], call me on [phone]')).toBe(true);
  });

  it('redacting what is redacted changes nothing', () => {
    for (const [language, said] of MIXED) {
      const once = redact(said, patternKinds, regionOf(language)).text;
      expect(redact(once, patternKinds, regionOf(language))).toEqual({ text: once, counts: {} });
    }
  });

  it('checks Luhn and IBAN check digits', () => {
    expect(luhnValid('79927398713')).toBe(true);
    expect(luhnValid('79927398710')).toBe(false);
    expect(ibanValid('GB82WEST12345698765432')).toBe(true);
    expect(ibanValid('GB83WEST12345698765432')).toBe(false);
  });

  it('reads the region from the language, its own first', () => {
    expect(regionOf('en-GB')).toBe('GB');
    expect(regionOf('en')).toBe('US');
    expect(regionOf('de')).toBe('DE');
    expect(regionOf('pt-BR')).toBe('BR');
    expect(regionOf('xx')).toBeUndefined();
    expect(regionOf(undefined)).toBeUndefined();
  });
});
