import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export interface EgressPolicy {
  /** Refuse targets on loopback, private, link-local, shared, multicast or metadata addresses. */
  guard: boolean;
  /** Lower-case host names the guard lets through (a customer's hook on the same private network). */
  allowedHosts: readonly string[];
}

const forbidden = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) forbidden.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) forbidden.addSubnet(net, bits, 'ipv6');

/** IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address it carries. */
export function isForbiddenAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return forbidden.check(mapped[1]!, 'ipv4');
  return forbidden.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}

export class EgressRefused extends Error {}

/**
 * Checks the address the socket will really connect to, after DNS: a name that resolves to a
 * private address is refused however it is spelled, and a second lookup cannot swap it.
 */
function guardedLookup(): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const allowed = addresses.filter((a) => !isForbiddenAddress(a.address));
      if (!allowed.length) return callback(new EgressRefused(`${hostname} resolves to a non-public address`), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

export interface EgressResponse {
  status: number;
  /** At most 64 KiB of the body; the rest is discarded. */
  body: string;
}

const RESPONSE_LIMIT = 64 * 1024;
const agents = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) };

/** POSTs a JSON body; rejects on network errors, refusals and timeouts (the whole exchange). */
export function postJson(url: string, body: string, headers: Record<string, string>, timeoutMs: number, policy: EgressPolicy): Promise<EgressResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const exempt = policy.allowedHosts.includes(target.hostname.toLowerCase());
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    // Node skips the lookup for IP literals, so those are checked here.
    if (policy.guard && !exempt && isIP(literal) && isForbiddenAddress(literal)) {
      reject(new EgressRefused(`${literal} is not a public address`));
      return;
    }
    const transport = target.protocol === 'https:' ? https : http;
    const req = transport.request(
      target,
      {
        method: 'POST',
        agent: agents[target.protocol as 'http:' | 'https:'],
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'user-agent': 'concierge-hooks/1', ...headers },
        ...(policy.guard && !exempt ? { lookup: guardedLookup() } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          if (size < RESPONSE_LIMIT) chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', () => {
          clearTimeout(timer);
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).subarray(0, RESPONSE_LIMIT).toString('utf8') });
        });
        res.on('error', reject);
      },
    );
    const timer = setTimeout(() => req.destroy(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(body);
  });
}
