import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';

/**
 * Which proxies' `X-Forwarded-For` the service believes (TRUST_PROXY, TRUSTED_PROXIES): at most
 * `hops` of them, each only when the address that handed the request on is one of `proxies`.
 */
export interface ProxyTrust {
  readonly hops: number;
  readonly proxies: readonly ProxyRange[];
}
type ProxyRange = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Loopback only: a balancer on the same machine, as `deploy/` runs one. */
export const LOOPBACK_PROXIES = '127.0.0.0/8,::1';

/** `10.0.0.0/8, 192.0.2.7, ::1`: addresses or CIDR ranges; anything else throws with the entry named. */
export function parseTrustedProxies(list: string): ProxyRange[] {
  return list
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      if (ipaddr.isValidCIDR(entry)) return ipaddr.parseCIDR(entry);
      if (ipaddr.isValid(entry)) {
        const address = ipaddr.parse(entry);
        return [address, address.kind() === 'ipv4' ? 32 : 128] as ProxyRange;
      }
      throw new Error(`TRUSTED_PROXIES: ${JSON.stringify(entry)} is not an IP address or CIDR range`);
    });
}

function isTrustedProxy(address: string, proxies: readonly ProxyRange[]): boolean {
  if (!ipaddr.isValid(address)) return false;
  // An IPv4-mapped IPv6 peer (`::ffff:127.0.0.1`, as a dual-stack socket reports it) is its IPv4 address.
  const parsed = ipaddr.process(address);
  return proxies.some(([range, bits]) => parsed.kind() === range.kind() && parsed.match(range, bits));
}

/**
 * The client's address: the socket's peer, or, when that peer is a trusted proxy, the address it
 * says it saw (the last in X-Forwarded-For), and so on back for at most `hops` proxies. A hop is
 * believed only from an address in `proxies`: a client that reaches the service directly cannot
 * pick the address its limits are counted under by sending the header itself.
 */
export function clientAddress(req: IncomingMessage, trust: ProxyTrust): string {
  const socket = req.socket.remoteAddress ?? '';
  if (trust.hops === 0) return socket;
  const header = req.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((hop) => hop.trim())
    .filter(Boolean);
  const chain = [socket, ...forwarded.reverse()];
  let at = 0;
  while (at < trust.hops && at < chain.length - 1 && isTrustedProxy(chain[at]!, trust.proxies)) at++;
  return chain[at]!;
}

/**
 * What per-address limits count under: an IPv4 address as it is, an IPv6 one by its /56, since
 * one client may be handed a whole IPv6 prefix and change address at will within it.
 */
export function limitAddressOf(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  return parsed.kind() === 'ipv6'
    ? `${ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/56`).toString()}/56`
    : parsed.toString();
}
