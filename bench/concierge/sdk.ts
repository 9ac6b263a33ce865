import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { ConciergeClient, signBody, verifyHook } from '../../sdk/node/src/index.js';
import { standardWebhookHeaders } from '../../server/src/concierge/signature.js';
import { quantile } from '../stats.js';
import type { Deployed } from './kit.js';
import { type AwaitingTurn, prepareTurns } from './replies.js';

/** verifyHook's micro-benchmark: batches of calls on one 2 KB turn hook; the stream: replies of 20 parts. */
export const SDK_BENCH = {
  batches: 40,
  perBatch: 2_000,
  warmUpBatches: 10,
  bodyBytes: 2048,
  parts: 20,
  replies: 60,
  warmUpReplies: 10,
};

const SECRET = `whsec_${Buffer.alloc(30, 11).toString('base64')}`;
const OLD = `whsec_${Buffer.alloc(30, 12).toString('base64')}`;

/** A turn hook's body of exactly `bytes` bytes, as the service sends it. */
function turnBody(bytes: number): string {
  const call = {
    type: 'turn.created',
    delivery_id: '8959dcf0-dd60-4df2-a813-2a870d15bf6b',
    sent_at: new Date().toISOString(),
    deployment_id: '4444ee9e-7064-4e07-9ec2-9645389936b1',
    agent_id: '6077815f-8c79-437e-873e-3833276a9193',
    conversation_id: '2894cd46-6548-40c1-b6a2-3cd324820451',
    turn_id: '3a8a815a-fa4e-4b5b-a69e-bde26f51ec82',
    user: { sub: 'visitor-1', name: 'Ana', ctx: { room: '214' } },
    text: '',
    mode: 'text',
    language: 'en-US',
    reply_url: 'http://127.0.0.1:8787/embed/concierge/4444ee9e-7064-4e07-9ec2-9645389936b1/replies',
  };
  const empty = JSON.stringify(call).length;
  return JSON.stringify({ ...call, text: 'When is breakfast? '.repeat(200).slice(0, bytes - empty) });
}

export interface PerCall {
  p50: number;
  p99: number;
}

/** µs per call of `work`, by batch: the p50 and p99 of the batches' means. */
function perCall(work: () => unknown): PerCall {
  const means: number[] = [];
  for (let b = 0; b < SDK_BENCH.batches + SDK_BENCH.warmUpBatches; b++) {
    const start = performance.now();
    for (let i = 0; i < SDK_BENCH.perBatch; i++) work();
    if (b >= SDK_BENCH.warmUpBatches) means.push(((performance.now() - start) * 1000) / SDK_BENCH.perBatch);
  }
  return { p50: quantile(means, 0.5), p99: quantile(means, 0.99) };
}

/** What verifying a 2 KB call costs: the least any verifier does (one HMAC and a parse), the SDK by each scheme and through a rotation, and the Standard Webhooks library. */
export function verifyCosts(): Record<'floor' | 'service' | 'standard' | 'rotation' | 'library', PerCall> {
  const body = turnBody(SDK_BENCH.bodyBytes);
  if (Buffer.byteLength(body) !== SDK_BENCH.bodyBytes) throw new Error(`the body is ${Buffer.byteLength(body)} bytes`);
  const raw = Buffer.from(body);
  const service = { 'x-service-signature': signBody(SECRET, body) };
  const standard = standardWebhookHeaders('msg_1', body, [SECRET]);
  const rotation = standardWebhookHeaders('msg_1', body, [SECRET, OLD]);
  const key = Buffer.from(SECRET.slice(6), 'base64');
  const library = new Webhook(SECRET);
  return {
    floor: perCall(() => (createHmac('sha256', key).update(raw).digest(), JSON.parse(body))),
    service: perCall(() => verifyHook(raw, service, SECRET)),
    standard: perCall(() => verifyHook(raw, standard, SECRET)),
    rotation: perCall(() => verifyHook(raw, rotation, [OLD, SECRET])),
    library: perCall(() => library.verify(body, standard)),
  };
}

/** ms per part: each turn's reply posted as 20 parts then whole, by a bare fetch loop and by the SDK's `stream`, taking turns. */
export async function streamCosts(serviceUrl: string, dep: Deployed): Promise<{ bare: PerCall; sdk: PerCall }> {
  const turns = await prepareTurns(serviceUrl, dep, SDK_BENCH.replies * 2);
  const replyUrl = `${serviceUrl}/embed/concierge/${dep.deploymentId}/replies`;
  const words = Array.from({ length: SDK_BENCH.parts }, (_, i) => `word ${i} of the reply, `);
  const post = async (fields: Record<string, unknown>, turn: AwaitingTurn) => {
    const body = JSON.stringify({ conversation_id: turn.conversationId, turn_id: turn.turnId, ...fields });
    const res = await fetch(replyUrl, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json', 'x-service-signature': signBody(dep.secret, body) },
    });
    if (!res.ok) throw new Error(`bare loop: ${res.status}`);
    await res.json();
  };
  const bare = async (turn: AwaitingTurn) => {
    for (const [part, text] of words.entries()) await post({ part, text }, turn);
    await post({ reply_text: words.join('') }, turn);
  };
  const client = new ConciergeClient({ secret: dep.secret });
  const sdk = (turn: AwaitingTurn) =>
    client.stream({ conversation_id: turn.conversationId, turn_id: turn.turnId, reply_url: replyUrl }, words);
  const samples = { bare: [] as number[], sdk: [] as number[] };
  for (let i = 0; i < turns.length; i++) {
    const way = i % 2 === 0 ? 'bare' : 'sdk';
    const start = performance.now();
    await (way === 'bare' ? bare(turns[i]!) : sdk(turns[i]!));
    if (i >= SDK_BENCH.warmUpReplies * 2) samples[way].push((performance.now() - start) / (SDK_BENCH.parts + 1));
  }
  for (const turn of turns) turn.socket.close();
  const of = (s: number[]) => ({ p50: quantile(s, 0.5), p99: quantile(s, 0.99) });
  return { bare: of(samples.bare), sdk: of(samples.sdk) };
}
