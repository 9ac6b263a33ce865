import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';

/**
 * The client's address: the socket's peer, or, behind `trustHops` proxies (TRUST_PROXY), the
 * address that many hops back in X-Forwarded-For. Hops beyond those are the client's own
 * words and never believed, so a client cannot pick the address its limits are counted under.
 */
export function clientAddress(req: IncomingMessage, trustHops: number): string {
  const socket = req.socket.remoteAddress ?? '';
  if (trustHops === 0) return socket;
  const header = req.headers['x-forwarded-for'];
  const forwarded = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((hop) => hop.trim()).filter(Boolean);
  const chain = [socket, ...forwarded.reverse()];
  return chain[Math.min(trustHops, chain.length - 1)]!;
}

/**
 * What per-address limits count under: an IPv4 address as it is, an IPv6 one by its /56, since
 * one client may be handed a whole IPv6 prefix and change address at will within it.
 */
export function limitAddressOf(address: string): string {
  if (!ipaddr.isValid(address)) return address;
  const parsed = ipaddr.process(address);
  return parsed.kind() === 'ipv6' ? `${ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/56`).toString()}/56` : parsed.toString();
}
