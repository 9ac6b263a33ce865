import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { signatureOf, standardWebhookHeaders } from '../../../server/src/concierge/signature.js';
import { HookVerificationError, verifyHook } from '../src/index.js';

// The Standard Webhooks specification's published test vector.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  payload: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const SECRET = `whsec_${Buffer.alloc(30, 1).toString('base64')}`;
const OLD = `whsec_${Buffer.alloc(30, 2).toString('base64')}`;
const now = new Date('2026-11-26T12:00:00Z');
const seconds = now.getTime() / 1000;

const turn = (sentAt = now.toISOString()) =>
  JSON.stringify({
    type: 'turn.created',
    delivery_id: '8959dcf0-dd60-4df2-a813-2a870d15bf6b',
    sent_at: sentAt,
    deployment_id: 'd',
    agent_id: 'a',
    conversation_id: 'c',
    turn_id: 't',
    user: { sub: 's', name: null, ctx: null },
    text: 'Hi',
    mode: 'text',
    language: 'en-US',
    reply_url: 'http://x/replies',
  });
const event = JSON.stringify({
  id: 'evt_1',
  type: 'turn.rated',
  created_at: now.toISOString(),
  deployment_id: 'd',
  conversation_id: 'c',
  data: { turn_id: 't', rating: 'up', comment: null },
});

// Signed as the service signs its calls (server/src/concierge/signature.ts), not by the SDK under test.
const standard = (secrets: string[], body: string, id = 'msg_1', at = seconds) =>
  standardWebhookHeaders(id, body, secrets, at * 1000);
const signBody = signatureOf;
const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(HookVerificationError);
    return (err as HookVerificationError).code;
  }
  throw new Error('accepted');
};

describe('verifyHook', () => {
  it('passes the Standard Webhooks test vector, and refuses it once a byte changes', () => {
    const headers = {
      'webhook-id': VECTOR.id,
      'webhook-timestamp': String(VECTOR.timestamp),
      'webhook-signature': VECTOR.signature,
    };
    const at = new Date(VECTOR.timestamp * 1000);
    // The vector's payload is no Concierge call: its signature passes, then the body is refused for what it is.
    expect(refusal(() => verifyHook(VECTOR.payload, headers, VECTOR.secret, { now: at }))).toBe('invalid_body');
    expect(refusal(() => verifyHook(VECTOR.payload.replace('2', '3'), headers, VECTOR.secret, { now: at }))).toBe(
      'invalid_signature',
    );
    expect(
      refusal(() =>
        verifyHook(VECTOR.payload, headers, VECTOR.secret, { now: new Date((VECTOR.timestamp + 301) * 1000) }),
      ),
    ).toBe('stale_timestamp');
  });

  it('returns the typed turn or event from bytes or text, plain headers or a Headers object', () => {
    const signed = verifyHook(Buffer.from(turn()), standard([SECRET], turn()), SECRET, { now });
    expect(signed).toMatchObject({ type: 'turn.created', text: 'Hi' });
    expect(verifyHook(event, new Headers(standard([SECRET], event)), [SECRET], { now })).toMatchObject({
      type: 'turn.rated',
      data: { rating: 'up' },
    });
    // As a delivery record spells them.
    const recorded = Object.fromEntries(
      Object.entries(standard([SECRET], event)).map(([k, v]) => [k.replace(/(^|-)w/g, (m) => m.toUpperCase()), v]),
    );
    expect(
      verifyHook(event, { ...recorded, 'X-Service-Signature': signBody(SECRET, event) }, SECRET, { now }).type,
    ).toBe('turn.rated');
  });

  it('requires the Standard Webhooks headers by default: X-Service-Signature alone is refused, so a recorded call cannot be replayed for ever', () => {
    expect(
      refusal(() => verifyHook(turn(), { 'x-service-signature': signBody(SECRET, turn()) }, SECRET, { now })),
    ).toBe('missing_signature');
    expect(refusal(() => verifyHook(event, { 'x-service-signature': signBody(SECRET, event) }, SECRET, { now }))).toBe(
      'missing_signature',
    );
    // Opted into: a turn hook is dated by its signed sent_at; a transcript event, which has no send time, still is not taken.
    const alone = { now, allowServiceSignatureAlone: true };
    expect(verifyHook(turn(), { 'x-service-signature': signBody(SECRET, turn()) }, SECRET, alone)).toEqual(
      JSON.parse(turn()),
    );
    expect(refusal(() => verifyHook(event, { 'x-service-signature': signBody(SECRET, event) }, SECRET, alone))).toBe(
      'missing_signature',
    );
    const old = turn(new Date(now.getTime() - 301_000).toISOString());
    expect(refusal(() => verifyHook(old, { 'x-service-signature': signBody(SECRET, old) }, SECRET, alone))).toBe(
      'stale_timestamp',
    );
  });

  it('refuses a secret whose key is shorter than 24 bytes, whsec_ alone among them', () => {
    for (const weak of ['whsec_', 'whsec_c2hvcnQ=', `whsec_${Buffer.alloc(23, 7).toString('base64')}`]) {
      expect(
        refusal(() => verifyHook(turn(), standard([weak], turn()), weak, { now })),
        weak,
      ).toBe('invalid_secret');
      expect(
        refusal(() => verifyHook(turn(), standard([SECRET], turn()), [SECRET, weak], { now })),
        weak,
      ).toBe('invalid_secret');
    }
    // The service's secrets (40 base62 characters) and the specification's vector (24 bytes) are long enough.
    const service = `whsec_${'Ab3'.repeat(13)}x`;
    expect(verifyHook(turn(), standard([service], turn()), service, { now }).type).toBe('turn.created');
  });

  it('agrees with the Standard Webhooks library on what it signs', () => {
    const headers = new Webhook(SECRET).sign('msg_2', now, event);
    const at = String(Math.floor(seconds));
    expect(
      verifyHook(event, { 'webhook-id': 'msg_2', 'webhook-timestamp': at, 'webhook-signature': headers }, SECRET, {
        now,
      }).type,
    ).toBe('turn.rated');
  });

  it('takes any of several secrets during a rotation, and the header carrying two signatures', () => {
    expect(verifyHook(turn(), standard([SECRET, OLD], turn()), OLD, { now }).type).toBe('turn.created');
    expect(verifyHook(turn(), standard([OLD], turn()), [SECRET, OLD], { now }).type).toBe('turn.created');
    expect(
      verifyHook(turn(), { 'x-service-signature': signBody(OLD, turn()) }, [SECRET, OLD], {
        now,
        allowServiceSignatureAlone: true,
      }).type,
    ).toBe('turn.created');
  });

  it('refuses a tampered body, another secret, a stale or future time, a missing or malformed signature', () => {
    const tampered = turn().replace('Hi', 'Ho');
    expect(refusal(() => verifyHook(tampered, standard([SECRET], turn()), SECRET, { now }))).toBe('invalid_signature');
    expect(
      refusal(() =>
        verifyHook(tampered, { 'x-service-signature': signBody(SECRET, turn()) }, SECRET, {
          now,
          allowServiceSignatureAlone: true,
        }),
      ),
    ).toBe('invalid_signature');
    expect(refusal(() => verifyHook(turn(), standard([OLD], turn()), SECRET, { now }))).toBe('invalid_signature');
    expect(refusal(() => verifyHook(turn(), standard([SECRET], turn(), 'msg_1', seconds - 301), SECRET, { now }))).toBe(
      'stale_timestamp',
    );
    expect(refusal(() => verifyHook(turn(), standard([SECRET], turn(), 'msg_1', seconds + 301), SECRET, { now }))).toBe(
      'stale_timestamp',
    );
    expect(
      verifyHook(turn(), standard([SECRET], turn(), 'msg_1', seconds - 301), SECRET, { now, toleranceSeconds: 600 })
        .type,
    ).toBe('turn.created');
    expect(refusal(() => verifyHook(turn(), {}, SECRET, { now }))).toBe('missing_signature');
    expect(refusal(() => verifyHook(turn(), { 'webhook-signature': 'v1,abc' }, SECRET, { now }))).toBe(
      'missing_signature',
    );
    expect(
      refusal(() =>
        verifyHook(turn(), { 'x-service-signature': signBody(SECRET, turn()).toUpperCase() }, SECRET, {
          now,
          allowServiceSignatureAlone: true,
        }),
      ),
    ).toBe('invalid_signature');
    expect(refusal(() => verifyHook(turn(), standard([SECRET], turn()), [], { now }))).toBe('no_secret');
    const notJson = 'not json';
    expect(refusal(() => verifyHook(notJson, standard([SECRET], notJson), SECRET, { now }))).toBe('invalid_body');
  });
});
