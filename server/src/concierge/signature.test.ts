import { describe, expect, it } from 'vitest';
import { signatureOf, verifySignature } from './signature.js';

describe('signatures on raw bytes', () => {
  const body = Buffer.from('{"reply_text":"Zürich 🚆"}');

  it('is sha256= and the lowercase hex HMAC-SHA256 of the exact bytes (a known vector)', () => {
    // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
    expect(signatureOf('Jefe', 'what do ya want for nothing?')).toBe('sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  });

  it('verifies under any live secret, and only the exact bytes', () => {
    const header = signatureOf('whsec_new', body);
    expect(verifySignature(header, body, ['whsec_old', 'whsec_new'])).toBe(true);
    expect(verifySignature(header, body, ['whsec_old'])).toBe(false);
    expect(verifySignature(header, Buffer.from(`${body.toString()} `), ['whsec_new'])).toBe(false);
    expect(verifySignature(header, body, [])).toBe(false);
  });

  it('refuses a malformed header before any comparison: no prefix, uppercase hex, short, missing', () => {
    const hex = signatureOf('s', body).slice('sha256='.length);
    for (const header of [hex, `sha256=${hex.toUpperCase()}`, `sha256=${hex.slice(2)}`, `sha1=${hex}`, `sha256=${hex} `, '', undefined]) {
      expect(verifySignature(header, body, ['s'])).toBe(false);
    }
  });
});
