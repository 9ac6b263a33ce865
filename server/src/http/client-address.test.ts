import { describe, expect, it } from 'vitest';
import type { IncomingMessage } from 'node:http';
import { clientAddress, LOOPBACK_PROXIES, limitAddressOf, parseTrustedProxies } from './client-address.js';

const request = (peer: string, forwarded?: string) =>
  ({
    socket: { remoteAddress: peer },
    headers: forwarded ? { 'x-forwarded-for': forwarded } : {},
  }) as unknown as IncomingMessage;

describe('the client address behind proxies', () => {
  const loopback = parseTrustedProxies(LOOPBACK_PROXIES);
  it('is the peer without TRUST_PROXY, whatever the header says', () => {
    expect(clientAddress(request('203.0.113.1', '198.51.100.9'), { hops: 0, proxies: loopback })).toBe('203.0.113.1');
  });
  it('reads one hop back per trusted proxy, and only from an address of TRUSTED_PROXIES', () => {
    expect(clientAddress(request('127.0.0.1', '9.9.9.9, 198.51.100.9'), { hops: 1, proxies: loopback })).toBe(
      '198.51.100.9',
    );
    expect(clientAddress(request('::ffff:127.0.0.1', '198.51.100.9'), { hops: 1, proxies: loopback })).toBe(
      '198.51.100.9',
    );
    expect(clientAddress(request('::1', '2001:db8::9'), { hops: 1, proxies: loopback })).toBe('2001:db8::9');
    // A client that reaches the node directly cannot name its own address.
    expect(clientAddress(request('203.0.113.1', '198.51.100.9'), { hops: 1, proxies: loopback })).toBe('203.0.113.1');
    const inner = parseTrustedProxies('10.0.0.0/8,192.0.2.7');
    expect(clientAddress(request('10.1.2.3', '198.51.100.9, 192.0.2.7'), { hops: 2, proxies: inner })).toBe(
      '198.51.100.9',
    );
    // The second hop is not a proxy of ours: what it says is not believed.
    expect(clientAddress(request('10.1.2.3', '198.51.100.9, 203.0.113.5'), { hops: 2, proxies: inner })).toBe(
      '203.0.113.5',
    );
    // Fewer hops in the header than configured: the farthest one there.
    expect(clientAddress(request('10.1.2.3'), { hops: 2, proxies: inner })).toBe('10.1.2.3');
  });
  it('refuses a TRUSTED_PROXIES entry that is not an address or range', () => {
    expect(() => parseTrustedProxies('10.0.0.0/8, proxy.example')).toThrow(
      'TRUSTED_PROXIES: "proxy.example" is not an IP address or CIDR range',
    );
    expect(parseTrustedProxies(' , ')).toEqual([]);
  });
});

describe('the address a per-address limit counts under', () => {
  it('is an IPv4 address itself (mapped or not) and an IPv6 address its /56', () => {
    expect(limitAddressOf('203.0.113.7')).toBe('203.0.113.7');
    expect(limitAddressOf('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(limitAddressOf('2001:db8:aa:bbcc::1')).toBe('2001:db8:aa:bb00::/56');
    expect(limitAddressOf('2001:db8:aa:bbff:ffff::9')).toBe('2001:db8:aa:bb00::/56');
    expect(limitAddressOf('')).toBe('');
  });
});
