import { describe, expect, it } from 'vitest';
import { pronounced } from './pronunciations.js';

describe('pronunciations', () => {
  const sayings = [
    { term: 'Adlon', say: 'Ad-lonn' },
    { term: 'Hotel Adlon', say: 'Hotel Ad-lonn Kempinski' },
    { term: 'St.', say: 'Saint' },
    { term: 'Spa', say: 'Schpa', language: 'de' },
  ];

  it('replaces whole words only, whatever their case, the longest term first', () => {
    expect(pronounced('Welcome to hotel adlon, the ADLON way; Adlonia is elsewhere.', sayings, 'en-US')).toBe(
      'Welcome to Hotel Ad-lonn Kempinski, the Ad-lonn way; Adlonia is elsewhere.',
    );
    expect(pronounced('St. Moritz, not Street.', sayings, 'en')).toBe('Saint Moritz, not Street.');
  });

  it('applies a language-bound term in that language and its regions only', () => {
    expect(pronounced('Das Spa.', sayings, 'de-AT')).toBe('Das Schpa.');
    expect(pronounced('The Spa.', sayings, 'en-GB')).toBe('The Spa.');
    expect(pronounced('Das Spa.', sayings, 'dsb')).toBe('Das Spa.');
  });

  it('leaves text alone without sayings, and reads letters of any script as word characters', () => {
    expect(pronounced('Adlon', undefined, 'en')).toBe('Adlon');
    expect(pronounced('Adlonпрост Adlon', sayings, 'en')).toBe('Adlonпрост Ad-lonn');
  });
});
