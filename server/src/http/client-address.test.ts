import { describe, expect, it } from 'vitest';
import { limitAddressOf } from './client-address.js';

describe('the address a per-address limit counts under', () => {
  it('is an IPv4 address itself (mapped or not) and an IPv6 address its /56', () => {
    expect(limitAddressOf('203.0.113.7')).toBe('203.0.113.7');
    expect(limitAddressOf('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(limitAddressOf('2001:db8:aa:bbcc::1')).toBe('2001:db8:aa:bb00::/56');
    expect(limitAddressOf('2001:db8:aa:bbff:ffff::9')).toBe('2001:db8:aa:bb00::/56');
    expect(limitAddressOf('')).toBe('');
  });
});
