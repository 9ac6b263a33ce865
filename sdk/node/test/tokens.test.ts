import { describe, expect, it } from 'vitest';
import { verifyUserToken } from '../../../server/src/concierge/sessions/user-token.js';
import { mintUserToken } from '../src/index.js';

const SECRET = `whsec_${Buffer.alloc(30, 3).toString('base64')}`;
const base = { deploymentId: 'dep-1', secret: SECRET, sub: 'guest-1' };
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));

describe('mintUserToken', () => {
  it('mints an HS256 token the service accepts, with the claims asked for', async () => {
    const token = mintUserToken({ ...base, name: 'Ana', ctx: { room: '214' }, ttl: 600 });
    const check = await verifyUserToken(token, 'dep-1', [SECRET]);
    expect(check).toEqual({
      ok: true,
      claims: expect.objectContaining({ sub: 'guest-1', name: 'Ana', ctx: { room: '214' } }),
    });
    const claims = claimsOf(token);
    expect(claims.exp - claims.iat).toBe(600);
    expect(JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString())).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect((await verifyUserToken(mintUserToken({ ...base, ttl: 86_400 }), 'dep-1', [SECRET])).ok).toBe(true);
    expect((await verifyUserToken(token, 'dep-2', [SECRET])).ok).toBe(false);
  });

  it('lasts an hour by default', () => {
    const claims = claimsOf(mintUserToken({ ...base, now: new Date(1_800_000_000_000) }));
    expect(claims).toEqual({ aud: 'dep-1', sub: 'guest-1', iat: 1_800_000_000, exp: 1_800_003_600 });
  });

  it('refuses what the service would refuse, at once and saying why', () => {
    expect(() => mintUserToken({ ...base, sub: '' })).toThrow('sub must be 1 to 256 characters');
    expect(() => mintUserToken({ ...base, sub: 'x'.repeat(257) })).toThrow(RangeError);
    expect(() => mintUserToken({ ...base, ttl: 86_401 })).toThrow(
      'ttl must be a whole number of seconds from 1 to 86400',
    );
    expect(() => mintUserToken({ ...base, ttl: 1.5 })).toThrow(RangeError);
    expect(() => mintUserToken({ ...base, ctx: { blob: 'x'.repeat(4096) } })).toThrow(
      'ctx must be at most 4 KiB as JSON',
    );
    expect(() => mintUserToken({ ...base, ctx: [] as unknown as Record<string, unknown> })).toThrow(
      'ctx must be an object',
    );
    expect(() => mintUserToken({ ...base, secret: '' })).toThrow(TypeError);
    expect(() => mintUserToken({ ...base, name: 'x'.repeat(257) })).toThrow(RangeError);
  });
});
