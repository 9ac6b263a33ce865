import type { IncomingMessage } from 'node:http';

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
