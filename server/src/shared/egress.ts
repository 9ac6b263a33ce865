import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Hooks and transcript events may reach public addresses only (SSRF: a tenant must not make the
 * service call, or scan, its own network), in every mode.
 */
export interface EgressPolicy {
  /** Targets the guard lets through (HOOK_ALLOWED_HOSTS: a customer's hook on the same private network, the demo). */
  allowedHosts: readonly AllowedHost[];
  /** Whose call this is, for a refusal to name the entry that would allow it ({@link egressFor}). */
  caller?: { use: EgressUse; customerId?: string | undefined };
}

/**
 * What the service calls out for: customers' hooks, transcript targets and tools (`hooks`), model
 * endpoints and MODEL_URL (`models`), knowledge bases' pages (`knowledge`), and the operator's
 * speech and embeddings servers.
 */
export const EGRESS_USES = ['hooks', 'models', 'knowledge', 'speech', 'embeddings'] as const;
export type EgressUse = (typeof EGRESS_USES)[number];

/** Whose calls an allowed host takes: one customer's, every customer's calls of one use, or all (`*`). */
export type Opens = { customer: string } | { use: EgressUse } | 'all';

/** A host as the URL parser writes it (lower case, IPv4 in dotted form, IPv6 in brackets), the one port allowed (or every port), and whose calls it takes. */
export interface AllowedHost {
  host: string;
  port?: number;
  opens: Opens;
}

const CUSTOMER_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * HOOK_ALLOWED_HOSTS: comma-separated `WHO@host`, `WHO@host:port`, `WHO@[ipv6]:port` or `WHO@ipv6`
 * entries, WHO being a customer's id (that customer's calls, every use), a use of {@link EGRESS_USES}
 * (that use, for every customer: a speech server of the operator's) or `*` (everything: one
 * customer on a machine of one's own). An entry must say whom it opens: on a service of many
 * customers, a host opened for one is not a door for the others. Hosts are normalised as URLs
 * normalise them, so `127.1` or `0x7f000001` in a hook URL is the entry `127.0.0.1`; a `port`
 * limits the entry to that port. Throws, naming the variable, on an entry it cannot read.
 */
export function parseAllowedHosts(value: string): AllowedHost[] {
  return value
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const at = entry.indexOf('@');
      if (at < 0)
        throw new Error(
          `HOOK_ALLOWED_HOSTS: "${entry}" does not say whom it opens: write CUSTOMER_ID@${entry} for one customer, ${EGRESS_USES.map((use) => `${use}@`).join(', ')} for one use, or *@${entry} for everything`,
        );
      const who = entry.slice(0, at);
      const opens: Opens | undefined =
        who === '*'
          ? 'all'
          : (EGRESS_USES as readonly string[]).includes(who)
            ? { use: who as EgressUse }
            : CUSTOMER_ID.test(who)
              ? { customer: who.toLowerCase() }
              : undefined;
      if (!opens)
        throw new Error(
          `HOOK_ALLOWED_HOSTS: "${entry}" opens "${who}", which is neither a customer id, nor ${EGRESS_USES.join(', ')}, nor *`,
        );
      const place = entry.slice(at + 1);
      const bracketed = /^(\[[^\]]+\])(?::(\d+))?$/.exec(place);
      const [host, port] = bracketed
        ? [bracketed[1]!, bracketed[2]]
        : place.split(':').length > 2
          ? [`[${place}]`, undefined]
          : (place.split(':') as [string, string?]);
      const normalised = hostOf(host);
      const number = port === undefined ? undefined : Number(port);
      if (!normalised || (number !== undefined && !(/^\d+$/.test(port!) && number >= 1 && number <= 65_535))) {
        throw new Error(`HOOK_ALLOWED_HOSTS: "${entry}" is not a WHO@host, WHO@host:port or WHO@[IPv6]:port entry`);
      }
      return number === undefined ? { host: normalised, opens } : { host: normalised, port: number, opens };
    });
}

/**
 * The policy one call goes out under: the allowed hosts that open it, for `use` on behalf of
 * `customerId` (none: the operator's own, as a speech server).
 */
export function egressFor(policy: EgressPolicy, use: EgressUse, customerId?: string): EgressPolicy {
  return {
    caller: { use, customerId },
    allowedHosts: policy.allowedHosts.filter(
      ({ opens }) =>
        opens === 'all' ||
        ('use' in opens && opens.use === use) ||
        ('customer' in opens && customerId !== undefined && opens.customer === customerId.toLowerCase()),
    ),
  };
}

function hostOf(host: string): string | undefined {
  try {
    return host ? new URL(`http://${host}/`).hostname : undefined;
  } catch {
    return undefined;
  }
}

const DEFAULT_PORTS: Record<string, number> = { 'http:': 80, 'https:': 443 };

function isAllowed(policy: EgressPolicy, target: URL): boolean {
  const port = target.port ? Number(target.port) : DEFAULT_PORTS[target.protocol];
  return policy.allowedHosts.some(
    (allowed) => allowed.host === target.hostname && (allowed.port === undefined || allowed.port === port),
  );
}

/** IPv6 forms that carry an IPv4 address a gateway would reach for us: NAT64 (RFC 6052, 8215), 6to4, Teredo. */
const TUNNELLED_IPV4 = new Set(['rfc6052', '6to4', 'teredo']);
/** The deprecated IPv4-compatible form (::a.b.c.d), which ipaddr.js files under plain unicast. */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

/**
 * Only globally routable unicast addresses are public. The ranges are ipaddr.js's (kept up to
 * date there, not hand-written here). IPv4-mapped addresses (::ffff:a.b.c.d) are judged as the
 * IPv4 address they are; every other form that embeds an IPv4 address is refused outright,
 * since what it reaches depends on a gateway we cannot see. Anything unparsable is refused.
 */
export function isForbiddenAddress(address: string): boolean {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return true;
  }
  if (ip.kind() === 'ipv4') return ip.range() !== 'unicast';
  const v6 = ip as ipaddr.IPv6;
  const range = v6.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145')
    return isForbiddenAddress(new ipaddr.IPv4(v6.toByteArray().slice(12)).toString());
  if (TUNNELLED_IPV4.has(range) || v6.match(IPV4_COMPATIBLE)) return true;
  return range !== 'unicast';
}

/** A target the guard refused; the message says how it could be allowed. */
export class EgressRefused extends Error {
  constructor(what: string, remedy: string) {
    super(`${what}; ${remedy}`);
    this.name = 'EgressRefused';
  }
}

/** What each use's calls are, as a refusal names them. */
const USE_NAMES: Record<EgressUse, string> = {
  hooks: 'hooks, transcript targets and tools',
  models: 'model endpoints',
  knowledge: 'knowledge pages',
  speech: 'speech servers',
  embeddings: 'embeddings servers',
};

/**
 * How the operator would allow a refused target (README, Configuration): the HOOK_ALLOWED_HOSTS
 * entry for this use, and for this customer alone, at the target's host and port.
 */
function remedyFor(policy: EgressPolicy, target: URL): string {
  const place = `${target.hostname}:${target.port || DEFAULT_PORTS[target.protocol]}`;
  const caller = policy.caller;
  if (!caller) return `the service calls only public addresses unless HOOK_ALLOWED_HOSTS allows WHO@${place}`;
  const alone = caller.customerId ? ` or ${caller.customerId}@${place} (this customer's alone)` : '';
  return `the service calls only public addresses unless its operator allows this one in HOOK_ALLOWED_HOSTS: ${caller.use}@${place} (every customer's ${USE_NAMES[caller.use]})${alone}`;
}

/**
 * Checks the address the socket will really connect to, after DNS: a name that resolves to a
 * private address is refused however it is spelled, and a second lookup cannot swap it.
 */
function guardedLookup(remedy: string): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      const allowed = addresses.filter((a) => !isForbiddenAddress(a.address));
      if (!allowed.length)
        return callback(new EgressRefused(`${hostname} resolves to a non-public address`, remedy), '', 0);
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
      callback(null, allowed[0]!.address, allowed[0]!.family);
    });
  };
}

export interface EgressResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** At most 64 KiB of the body; the rest is discarded. */
  body: string;
  /** The body's whole length in bytes, read or not. */
  bytes: number;
}

/** The whole exchange took longer than its timeout. */
export class EgressTimeout extends Error {
  constructor(ms: number) {
    super(`timed out after ${ms} ms`);
    this.name = 'EgressTimeout';
  }
}

const RESPONSE_LIMIT = 64 * 1024;
const keptAlive = () => ({
  'http:': new http.Agent({ keepAlive: true }),
  'https:': new https.Agent({ keepAlive: true }),
});
/**
 * Connections kept alive apart for allowed hosts and for checked ones: a socket opened to a host
 * that HOOK_ALLOWED_HOSTS opens for one customer must never carry another's request, which the
 * address check would have refused.
 */
const agents = { allowed: keptAlive(), checked: keptAlive() };

/** Every header a POST carries, ours and the caller's, exactly as sent. */
function requestHeaders(body: string, headers: Record<string, string>): Record<string, string> {
  return {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'user-agent': 'concierge-hooks/1',
    ...headers,
  };
}

/** One POST as it went: what was sent, and the answer or why none came. */
export interface Exchange {
  url: string;
  sentAt: string;
  durationMs: number;
  request: { headers: Record<string, string>; body: string };
  response?: EgressResponse;
  error?: { kind: 'timeout' | 'network' | 'egress_refused'; message: string };
}

/** POSTs a JSON body, recorded: never rejects, whatever happened on the way. */
export async function exchange(
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
  policy: EgressPolicy,
  signal?: AbortSignal,
): Promise<Exchange> {
  const sentAt = new Date();
  const started = performance.now();
  const request = { headers: requestHeaders(body, headers), body };
  const done = (): Pick<Exchange, 'url' | 'sentAt' | 'durationMs' | 'request'> => ({
    url,
    sentAt: sentAt.toISOString(),
    durationMs: Math.round(performance.now() - started),
    request,
  });
  try {
    const response = await guardedPost(url, body, request.headers, timeoutMs, policy, signal);
    return { ...done(), response };
  } catch (err) {
    const kind = err instanceof EgressRefused ? 'egress_refused' : err instanceof EgressTimeout ? 'timeout' : 'network';
    return { ...done(), error: { kind, message: err instanceof Error ? err.message : String(err) } };
  }
}

/** A response body taken as it arrives: `wanted` sees the status and headers first. */
export interface StreamedBody {
  wanted(status: number, headers: IncomingHttpHeaders): boolean;
  data(chunk: Buffer): void;
}

/**
 * POSTs a body with exactly these headers, under the guard; rejects on network errors, refusals,
 * timeouts (the whole exchange) and `signal` (a shutdown, or a caller that will not wait any longer).
 * With `stream`, a body it wants (audio, any length) is handed over as it arrives instead of kept;
 * any other (an error page) is kept like the rest.
 */
export function guardedPost(
  url: string,
  body: string | Buffer,
  headers: Record<string, string>,
  timeoutMs: number,
  policy: EgressPolicy,
  signal?: AbortSignal,
  stream?: StreamedBody,
): Promise<EgressResponse> {
  return guardedRequest('POST', url, body, headers, timeoutMs, policy, signal, stream);
}

/** A GET under the same guard (a knowledge base's pages): what {@link guardedPost} does, with no body. */
export function guardedGet(
  url: string,
  headers: Record<string, string>,
  timeoutMs: number,
  policy: EgressPolicy,
  stream?: StreamedBody,
): Promise<EgressResponse> {
  return guardedRequest('GET', url, undefined, headers, timeoutMs, policy, undefined, stream);
}

function guardedRequest(
  method: 'GET' | 'POST',
  url: string,
  body: string | Buffer | undefined,
  headers: Record<string, string>,
  timeoutMs: number,
  policy: EgressPolicy,
  signal?: AbortSignal,
  stream?: StreamedBody,
): Promise<EgressResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    // Node would send them as an Authorization header, which the delivery record does not show.
    // New URLs with them are refused at the API; this covers any stored before that.
    if (target.username || target.password) {
      reject(new EgressRefused('a URL with a user name or password is never called', 'put a token in the path'));
      return;
    }
    const exempt = isAllowed(policy, target);
    const literal = target.hostname.replace(/^\[|\]$/g, '');
    // Node skips the lookup for IP literals, so those are checked here.
    if (!exempt && isIP(literal) && isForbiddenAddress(literal)) {
      reject(new EgressRefused(`${literal} is not a public address`, remedyFor(policy, target)));
      return;
    }
    const transport = target.protocol === 'https:' ? https : http;
    const req = transport.request(
      target,
      {
        method,
        agent: agents[exempt ? 'allowed' : 'checked'][target.protocol as 'http:' | 'https:'],
        headers,
        ...(exempt ? {} : { lookup: guardedLookup(remedyFor(policy, target)) }),
        ...(signal ? { signal } : {}),
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const streamed = stream?.wanted(res.statusCode ?? 0, res.headers) ? stream : undefined;
        res.on('data', (chunk: Buffer) => {
          if (streamed) streamed.data(chunk);
          else if (size < RESPONSE_LIMIT) chunks.push(chunk);
          size += chunk.length;
        });
        res.on('end', () => {
          clearTimeout(timer);
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).subarray(0, RESPONSE_LIMIT).toString('utf8'),
            bytes: size,
          });
        });
        res.on('error', reject);
      },
    );
    const timer = setTimeout(() => req.destroy(new EgressTimeout(timeoutMs)), timeoutMs);
    req.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.end(body);
  });
}
