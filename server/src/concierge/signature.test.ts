import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signatureOf, standardSignature, standardWebhookHeaders, verifySignature } from './signature.js';

describe('signatures on raw bytes', () => {
  const body = Buffer.from('{"reply_text":"Zürich 🚆"}');

  it('is sha256= and the lowercase hex HMAC-SHA256 of the exact bytes (a known vector)', () => {
    // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
    expect(signatureOf('Jefe', 'what do ya want for nothing?')).toBe(
      'sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
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
    for (const header of [
      hex,
      `sha256=${hex.toUpperCase()}`,
      `sha256=${hex.slice(2)}`,
      `sha1=${hex}`,
      `sha256=${hex} `,
      '',
      undefined,
    ]) {
      expect(verifySignature(header, body, ['s'])).toBe(false);
    }
  });
});

describe('Standard Webhooks signatures', () => {
  it("reproduce the specification's published test vector", () => {
    expect(
      standardSignature(
        'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        'msg_p5jXN8AQM9LWM0D4loKWxJek',
        1614265330,
        '{"test": 2432232314}',
      ),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it("are accepted by the specification's own library, under each secret of a rotation, and by no other secret", () => {
    const current = 'whsec_0123456789abcdefghijABCDEFGHIJklmnopqrst';
    const previous = 'whsec_ZYXWVUTSRQponmlkjihg9876543210zyxwvutsrq';
    const body = '{"type":"turn.created","text":"Zürich 🚆"}';
    const headers = standardWebhookHeaders('8c0c5a9e-1a7b-4b39-9a57-3f1e2d4c6b80', body, [current, previous]);
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(headers['webhook-signature']!.split(' ')[0]).toBe(
      standardSignature(current, headers['webhook-id']!, Number(headers['webhook-timestamp']), body),
    );
    for (const secret of [current, previous])
      expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook('whsec_someoneElsesSecretAAAAAAAAAAAAAAAAAAAAA').verify(body, headers)).toThrow();
    expect(() => new Webhook(current).verify(`${body} `, headers)).toThrow();
  });
});
