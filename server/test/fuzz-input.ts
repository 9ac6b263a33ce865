import { createHmac } from 'node:crypto';
import { SignJWT } from 'jose';
import { deepJson } from './harness.js';

/** mulberry32: a small seeded generator, so a failing run can be replayed from its seed. */
export class Rng {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(below: number): number {
    return Math.floor(this.next() * below);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** What the fuzzer knows of the service under test, so some inputs get past the first checks. */
export interface FuzzTarget {
  apiKey: string;
  agentId: string;
  deploymentId: string;
  jobId: string;
  secret: string;
  conversationId: string;
  turnId: string;
}

const NASTY = [
  '',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  '\ud83d\ude00',
  '\u202e',
  '\ufeff',
  '%00',
  "'; drop table agents; --",
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '__proto__',
  'constructor',
  'null',
  '00000000-0000-4000-8000-000000000000',
  'x'.repeat(300),
  'é'.repeat(5_000),
];

/** What the text hygiene of README, The management API is about: the stores refuse or rewrite these. */
const POISON = ['\u0000', 'Breakfast\u0000', '\u0000\u0000', 'half \ud800 pair', '\udc00', 'end \ud83d'];

export function nastyString(rng: Rng): string {
  if (rng.chance(0.3)) return rng.pick(POISON);
  if (rng.chance(0.4)) return rng.pick(NASTY);
  let out = '';
  const length = rng.int(40);
  for (let i = 0; i < length; i++) out += String.fromCharCode(rng.chance(0.8) ? 32 + rng.int(95) : rng.int(0x10000));
  return out;
}

const NUMBERS = [0, -1, 1, 1.5, 2 ** 31, 2 ** 53 + 1, -1e308, 1e308, Number.MAX_SAFE_INTEGER, 604_801, 86_400, 0.1];

/** Any JSON value, sometimes deep, sometimes with keys that matter to JavaScript. */
export function randomJson(rng: Rng, depth = 0): unknown {
  const roll = rng.int(depth > 6 ? 4 : 7);
  if (roll === 0) return null;
  if (roll === 1) return rng.chance(0.5);
  if (roll === 2) return rng.pick(NUMBERS);
  if (roll === 3) return nastyString(rng);
  if (roll === 4) return Array.from({ length: rng.int(4) }, () => randomJson(rng, depth + 1));
  const out: Record<string, unknown> = {};
  for (let i = rng.int(4); i > 0; i--)
    out[
      rng.chance(0.2) ? rng.pick(['__proto__', 'constructor', 'prototype', 'a\u0000']) : nastyString(rng).slice(0, 20)
    ] = randomJson(rng, depth + 1);
  return out;
}

/** A body as text: valid-looking ones with one field spoiled, random JSON, deep JSON, or not JSON at all. */
function randomBody(rng: Rng, target: FuzzTarget): string {
  const roll = rng.int(8);
  if (roll === 0) return deepJson(100 + rng.int(5_000), rng.pick(['{"a":', '[']), rng.pick(['}', ']']));
  if (roll === 1)
    return rng.pick(['{', '{"name":', 'nul', '[1,2', '"\\ud800"', '{"a":"\\u0000"}', '\u0000', '{"name":"x",}', '']);
  if (roll === 2) return JSON.stringify(randomJson(rng));
  const valid: Record<string, unknown>[] = [
    { name: 'Desk', description: 'Front desk' },
    {
      agent_id: target.agentId,
      channel_config: { hook_url: 'https://hotel.example/hook', widget: { title: 'Hi' } },
      engagement_rules: { turns_per_minute: 5 },
    },
    { draft_spec: { greeting: 'Hello', voice: { rate: 1 } } },
    { grace_period_s: 60 },
    { conversation_id: target.conversationId, turn_id: target.turnId, reply_text: 'Yes' },
  ];
  const body: Record<string, unknown> = { ...rng.pick(valid) };
  const keys = Object.keys(body);
  const value = rng.int(3);
  body[rng.chance(0.7) ? rng.pick(keys) : nastyString(rng).slice(0, 10)] =
    value === 0 ? nastyString(rng) : value === 1 ? JSON.parse(deepJson(40)) : randomJson(rng);
  return JSON.stringify(body);
}

const ROUTES = [
  ['get', '/api/v1/agents'],
  ['post', '/api/v1/agents'],
  ['get', '/api/v1/agents/:agent'],
  ['put', '/api/v1/agents/:agent'],
  ['delete', '/api/v1/agents/:any'],
  ['get', '/api/v1/agents/:agent/spec'],
  ['post', '/api/v1/agents/:agent/publish'],
  ['get', '/api/v1/agents/:agent/generation-status'],
  ['get', '/api/v1/jobs/:job/status'],
  ['get', '/api/v1/deployments'],
  ['post', '/api/v1/deployments'],
  ['get', '/api/v1/deployments/:deployment'],
  ['put', '/api/v1/deployments/:deployment'],
  ['post', '/api/v1/deployments/:any/activate'],
  ['post', '/api/v1/deployments/:any/rotate-secret'],
  ['get', '/api/v1/settings/api-key'],
  ['get', '/api/v1/settings/api-key/usage'],
  ['post', '/embed/concierge/:deployment/replies'],
  ['get', '/readyz'],
  ['get', '/openapi.json'],
  ['patch', '/api/v1/agents'],
  ['options', '/api/v1/agents'],
  ['get', '/nothing/here'],
] as const;

const QUERIES = [
  'page=0',
  'page=-1',
  'page=1e309',
  'per_page=101',
  'per_page=abc',
  'status=published',
  'status=%00',
  'search=%00',
  'search=%ED%A0%80',
  'search=%F0%9F%98',
  'search=a&search=b',
  '__proto__[x]=1',
  'constructor[prototype][x]=1',
  'days=91',
  'days=%ZZ',
  'agent_id=%00',
  `search=${'q'.repeat(300)}`,
];

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

/** One HTTP request that fetch can send: real routes with spoiled ids, queries, headers and bodies. */
export function randomRequest(rng: Rng, target: FuzzTarget): FuzzRequest {
  const [method, pattern] = rng.pick(ROUTES);
  const ids: Record<string, string> = {
    agent: target.agentId,
    deployment: target.deploymentId,
    job: target.jobId,
    any: '00000000-0000-4000-8000-000000000000',
  };
  const path = pattern.replace(/:(\w+)/g, (_m, name: string) =>
    rng.chance(0.75)
      ? ids[name]!
      : rng.pick([
          '%00',
          '%ZZ',
          'nope',
          '..%2F..',
          encodeURIComponent(nastyString(rng).toWellFormed()) || 'x',
          'x'.repeat(2_000),
          '%ED%A0%80',
        ]),
  );
  const query = rng.chance(0.4) ? `?${Array.from({ length: 1 + rng.int(3) }, () => rng.pick(QUERIES)).join('&')}` : '';
  const headers: Record<string, string> = {};
  const auth = rng.int(6);
  if (auth < 4) headers.authorization = `Bearer ${target.apiKey}`;
  else if (auth === 4)
    headers.authorization = rng.pick([
      'Bearer ',
      'Bearer vak_nope',
      `Bearer ${target.apiKey}x`,
      'Basic abc',
      `Bearer ${'k'.repeat(5_000)}`,
    ]);
  if (rng.chance(0.2)) headers['x-request-id'] = rng.pick(['ok-1', 'bad id', 'x'.repeat(200), '\u00e9']);
  if (rng.chance(0.15))
    headers['idempotency-key'] = rng.pick(['retry-1', 'retry-2', '', ' ', 'x'.repeat(300), `k${rng.int(50)}`]);
  let body: string | undefined;
  if (method === 'post' || method === 'put' || method === 'patch' || rng.chance(0.05)) {
    body = randomBody(rng, target);
    headers['content-type'] = rng.chance(0.85)
      ? 'application/json'
      : rng.pick([
          'text/plain',
          'application/json; charset=latin1',
          'application/x-www-form-urlencoded',
          'multipart/form-data',
        ]);
    if (pattern.startsWith('/embed'))
      headers['x-service-signature'] = rng.chance(0.7)
        ? `sha256=${createHmac('sha256', target.secret).update(body).digest('hex')}`
        : rng.pick(['', 'sha256=00', 'sha1=abc', `sha256=${'A'.repeat(64)}`]);
  }
  return {
    method: method.toUpperCase(),
    path: path + query,
    headers: Object.fromEntries(Object.entries(headers).filter(([, v]) => /^[\x20-\x7e]*$/.test(v))),
    ...(body !== undefined ? { body } : {}),
  };
}

/** Bytes no HTTP client would send: broken request lines and headers, lying lengths, bad chunks. */
export function rawRequest(rng: Rng, target: FuzzTarget): { bytes: Buffer; hangUp: boolean } {
  const auth = `Authorization: Bearer ${target.apiKey}\r\n`;
  const body = randomBody(rng, target);
  const forms = [
    () => `GET /api/v1/agents HTTP/1.1\r\nHost: x\r\n${auth}Content-Length: -5\r\n\r\n`,
    () =>
      `POST /api/v1/agents HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: ${body.length + 50}\r\n\r\n${body}`,
    () =>
      `POST /api/v1/agents HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n${body}\r\n0\r\n\r\n`,
    () =>
      `POST /api/v1/agents HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"nam\r\n`,
    () => `GET /api/v1/agents HTTP/1.1\r\nHost: x\r\nX-Bad\u0000Header: 1\r\n\r\n`,
    () => `GET /api/v1/agents?search=${nastyString(rng)} HTTP/1.1\r\nHost: x\r\n${auth}\r\n`,
    () => `${nastyString(rng)} / HTTP/1.1\r\n\r\n`,
    () => `GET ${'/a'.repeat(5_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    () => `GET / HTTP/9.9\r\n\r\n`,
    () =>
      `POST /embed/concierge/${target.deploymentId}/replies HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 70000\r\n\r\n{`,
    () =>
      `PUT /api/v1/agents/${target.agentId} HTTP/1.1\r\nHost: x\r\n${auth}Content-Type: application/json\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n{"a":1}`,
    () => `GET /api/v1/agents HTTP/1.1\r\nHost: x\r\n${auth}${'X-Filler: y\r\n'.repeat(2_000)}\r\n`,
  ];
  const text = rng.pick(forms)();
  const bytes = Buffer.from(rng.chance(0.1) ? text.slice(0, rng.int(text.length)) : text, 'utf8');
  // Some close their end mid-request: what a client that gives up looks like.
  return { bytes, hangUp: rng.chance(0.3) };
}

/** A token signed with the real secret but with claims a careless or hostile customer might mint. */
export async function randomToken(rng: Rng, target: FuzzTarget): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = { sub: 'fuzz', aud: target.deploymentId, iat: now, exp: now + 600 };
  const spoil = rng.int(9);
  if (spoil === 0) claims.sub = rng.pick(['', 'a\u0000', '\ud800', 'x'.repeat(300), 5]);
  if (spoil === 1) claims.exp = rng.pick([1e300, -1, now + 10 * 86_400, 'soon', 2 ** 53]);
  if (spoil === 2) claims.iat = rng.pick([1e300 - 100, now + 10 * 365 * 86_400, -1e300]);
  if (spoil === 3) claims.name = nastyString(rng);
  if (spoil === 4) claims.ctx = randomJson(rng);
  if (spoil === 5) claims.ctx = JSON.parse(deepJson(40));
  if (spoil === 6) claims.aud = rng.pick([[target.deploymentId, 'x'], 'other', null]);
  if (spoil === 7) {
    const header = Buffer.from(JSON.stringify({ alg: rng.pick(['none', 'HS512', 'RS256']), typ: 'JWT' })).toString(
      'base64url',
    );
    return `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${rng.chance(0.5) ? '' : 'c2ln'}`;
  }
  if (spoil === 8) return rng.pick(['', 'a.b.c', 'x'.repeat(9_000), `${nastyString(rng)}.${nastyString(rng)}`]);
  return new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(target.secret));
}

/** A client frame: text that is not JSON, JSON that is no message, or a message with one field spoiled. */
export async function randomFrame(rng: Rng, target: FuzzTarget): Promise<string | Buffer> {
  const roll = rng.int(10);
  if (roll === 0) return Buffer.from(Array.from({ length: rng.int(64) }, () => rng.int(256)));
  if (roll === 1)
    return rng.pick([
      '',
      '{',
      'null',
      '[]',
      '"hello"',
      '\u0000',
      deepJson(1_000),
      deepJson(3_000, '[', ']'),
      'x'.repeat(17 * 1024),
    ]);
  if (roll === 2) return JSON.stringify(randomJson(rng));
  const messages: Record<string, unknown>[] = [
    { type: 'user_turn', client_turn_id: `c${rng.int(1e6)}`, text: 'When is breakfast?', mode: 'text' },
    { type: 'refresh_token', token: await randomToken(rng, target) },
    {
      type: 'hello',
      token: await randomToken(rng, target),
      conversation_id: rng.chance(0.5) ? target.conversationId : '00000000-0000-4000-8000-000000000000',
      last_seq: rng.pick([0, -1, 1e308, 2 ** 53]),
    },
    { type: 'end' },
    { type: rng.pick(['ping', 'HELLO', 'user_turn ', '__proto__']) },
  ];
  const message = { ...rng.pick(messages) };
  if (rng.chance(0.8)) {
    const keys = Object.keys(message);
    message[rng.chance(0.8) ? rng.pick(keys) : nastyString(rng).slice(0, 10)] = rng.chance(0.5)
      ? nastyString(rng)
      : randomJson(rng);
  }
  // A valid end would close the fuzzer's own conversation at once; keep it rare.
  if (message.type === 'end' && Object.keys(message).length === 1 && rng.chance(0.9)) message.extra = 1;
  return JSON.stringify(message);
}
