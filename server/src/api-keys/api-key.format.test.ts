import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, isWellFormedApiKey, keyLast4, keyPrefix } from './api-key.format.js';

describe('API key format', () => {
  it('is vak_ + 32 base62 + 6 base62 of the CRC32 of those 32', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^vak_[0-9A-Za-z]{38}$/);
    const body = key.slice(4, 36);
    let n = 0;
    for (const c of key.slice(36))
      n = n * 62 + '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'.indexOf(c);
    expect(n).toBe(crc32(body));
    expect(isWellFormedApiKey(key)).toBe(true);
  });

  it('is random', () => {
    const keys = new Set(Array.from({ length: 200 }, generateApiKey));
    expect(keys.size).toBe(200);
  });

  it('refuses a typo, a wrong prefix, a wrong length and a bad checksum before any lookup', () => {
    const key = generateApiKey();
    const flipped = key.slice(0, 10) + (key[10] === 'a' ? 'b' : 'a') + key.slice(11);
    expect(isWellFormedApiKey(flipped)).toBe(false);
    expect(isWellFormedApiKey(`xak_${key.slice(4)}`)).toBe(false);
    expect(isWellFormedApiKey(key.slice(0, -1))).toBe(false);
    expect(isWellFormedApiKey(`${key}0`)).toBe(false);
    expect(isWellFormedApiKey(key.slice(0, 36) + '000000')).toBe(false);
  });

  it('hashes with SHA-256 and exposes only prefix and last4', () => {
    const key = generateApiKey();
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(keyPrefix(key)).toBe(key.slice(0, 8));
    expect(keyLast4(key)).toBe(key.slice(-4));
  });
});
