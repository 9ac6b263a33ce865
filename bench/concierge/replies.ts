import { randomUUID } from 'node:crypto';
import SQLite from 'better-sqlite3';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { signBody } from '../../sdk/node/src/index.js';
import { startTarget } from '../process.js';
import { quantile } from '../stats.js';
import { BenchSocket, type Deployed, type Frame, post } from './kit.js';
import type { ResolvedTurn } from './store-floor.js';

export const WARM_UP = 1_000;
export const MEASURED = 10_000;
const TURNS_PER_CONVERSATION = 50; // the most max_pending_turns allows

export interface Latency {
  p50: number;
  p99: number;
}

export interface AwaitingTurn {
  socket: BenchSocket;
  conversationId: string;
  turnId: string;
}

/** One POST, timed from sending it to the matching frame's arrival on the socket (ms). */
export async function timedPost(
  agent: Agent,
  url: string,
  body: string,
  signature: string,
  socket: BenchSocket,
  match: (f: Frame) => boolean,
): Promise<number> {
  let arrived = 0;
  const frame = new Promise<void>((resolve) => {
    socket.onFrame = (f) => {
      if (!match(f)) return;
      arrived = performance.now();
      resolve();
    };
  });
  const started = performance.now();
  const status = await post(agent, url, body, { 'x-service-signature': signature });
  if (status !== 202) throw new Error(`POST ${url}: ${status}`);
  await frame;
  return arrived - started;
}

const replyBody = (conversationId: string, turnId: string) =>
  JSON.stringify({ conversation_id: conversationId, turn_id: turnId, reply_text: 'Breakfast is from 7 to 10.' });

/** The quantiles of the samples after the first `warmUp`. */
export function latencyOf(samples: readonly number[], warmUp: number): Latency {
  const measured = samples.slice(warmUp);
  return { p50: quantile(measured, 0.5), p99: quantile(measured, 0.99) };
}

const summary = (samples: number[]): Latency => latencyOf(samples, WARM_UP);

/**
 * Runs `work` against a bare-push target started with `env`, given a timed POST to it: a reply-like
 * body pushed to one bare ws client, timed until it arrives there (ms).
 */
async function withPushTarget<T>(
  env: NodeJS.ProcessEnv,
  work: (post: () => Promise<number>) => Promise<T>,
): Promise<T> {
  const target = await startTarget('bench/targets/bare-push.ts', env);
  const socket = await BenchSocket.open(target.url.replace(/^http/, 'ws'));
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    return await work(() => {
      const turnId = randomUUID();
      const body = replyBody(randomUUID(), turnId);
      return timedPost(
        agent,
        `${target.url}/embed/concierge/${randomUUID()}/replies`,
        body,
        signBody('whsec_floor', body),
        socket,
        (f) => f.turn_id === turnId,
      );
    });
  } finally {
    socket.close();
    agent.destroy();
    await target.stop();
  }
}

/** The floor: a bare node:http server (or, `express`, the same behind an Express route) pushing each POST's body to one bare ws client. */
export async function floorLatency(express = false, durable?: { store: string; turnsFile: string }): Promise<Latency> {
  const env = {
    ...(express ? { BARE_EXPRESS: '1' } : {}),
    ...(durable ? { BARE_STORE: durable.store, BARE_TURNS: durable.turnsFile } : {}),
  };
  return withPushTarget(env, async (post) => {
    const samples: number[] = [];
    for (let i = 0; i < WARM_UP + MEASURED; i++) samples.push(await post());
    return summary(samples);
  });
}

/**
 * The durable floor: {@link floorLatency} whose server first stores, in a bare transaction on
 * `store` (the service's SQLite file, or its PostgreSQL URL), what the service stores for each
 * reply, for one of the turns the service resolved (put back to acknowledged first).
 */
export async function durableFloorLatency(store: string, turns: readonly ResolvedTurn[]): Promise<Latency> {
  const dir = mkdtempSync(join(tmpdir(), 'concierge-floor-'));
  try {
    const turnsFile = join(dir, 'turns.json');
    writeFileSync(turnsFile, JSON.stringify(turns));
    return await floorLatency(false, { store, turnsFile });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Opens conversations on `serviceUrl` and fills each with acknowledged turns awaiting a reply. */
export async function prepareTurns(serviceUrl: string, dep: Deployed, count: number): Promise<AwaitingTurn[]> {
  const turns: AwaitingTurn[] = [];
  const conversations = Math.ceil(count / TURNS_PER_CONVERSATION);
  for (let c = 0; c < conversations; c += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, conversations - c) }, async (_, k) => {
        const socket = await BenchSocket.session(serviceUrl, dep, `guest-${c + k}`);
        const acknowledged = new Set<string>();
        await new Promise<void>((resolve, reject) => {
          socket.onFrame = (f) => {
            if (f.type === 'turn_failed' || f.type === 'error')
              reject(new Error(`preparing turns: ${JSON.stringify(f)}`));
            if (f.type !== 'turn_acknowledged') return;
            acknowledged.add(f.turn_id);
            if (acknowledged.size === TURNS_PER_CONVERSATION) resolve();
          };
          for (let t = 0; t < TURNS_PER_CONVERSATION; t++) {
            socket.ws.send(
              JSON.stringify({ type: 'user_turn', client_turn_id: `t${t}`, text: 'When is breakfast?', mode: 'text' }),
            );
          }
        });
        for (const turnId of acknowledged) turns.push({ socket, conversationId: socket.conversationId, turnId });
      }),
    );
  }
  return turns.slice(0, count);
}

/** A turn's signed reply posted to `postUrl`, timed until its reply frame arrives on the turn's socket (ms). */
export function timedReply(
  agent: Agent,
  postUrl: string,
  dep: Deployed,
  { socket, conversationId, turnId }: AwaitingTurn,
) {
  const body = replyBody(conversationId, turnId);
  return timedPost(
    agent,
    `${postUrl}/embed/concierge/${dep.deploymentId}/replies`,
    body,
    signBody(dep.secret, body),
    socket,
    (f) => f.type === 'reply' && f.turn_id === turnId,
  );
}

/** Posts one signed reply per turn to `postUrl`, one at a time, each timed until its reply frame. */
export async function measureReplies(postUrl: string, dep: Deployed, turns: readonly AwaitingTurn[]): Promise<Latency> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const samples: number[] = [];
  try {
    for (const turn of turns) samples.push(await timedReply(agent, postUrl, dep, turn));
  } finally {
    agent.destroy();
  }
  return summary(samples);
}

/**
 * The service's replies and its durable floor's, taken in turns: each turn's reply to the service
 * and the same turn's statements by the floor on a copy of the service's SQLite file taken before
 * any reply (which of the two goes first alternates). Measured one after the other, a minute
 * apart, the floor's p50 moved by a third between runs on this machine, and the ratio with it;
 * taken in turns, whatever else the machine does slows both alike.
 */
export async function interleavedReplies(
  postUrl: string,
  dep: Deployed,
  turns: readonly AwaitingTurn[],
  sqliteFile: string,
): Promise<{ service: Latency; durable: Latency }> {
  const dir = mkdtempSync(join(tmpdir(), 'concierge-floor-'));
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const samples = { service: [] as number[], durable: [] as number[] };
  try {
    const copy = join(dir, 'floor.sqlite');
    const source = new SQLite(sqliteFile, { readonly: true });
    await source.backup(copy).finally(() => source.close());
    const turnsFile = join(dir, 'turns.json');
    writeFileSync(turnsFile, JSON.stringify(resolvedTurns(turns, dep)));
    await withPushTarget({ BARE_STORE: copy, BARE_TURNS: turnsFile }, async (post) => {
      // The floor stores the next of `turns` at each POST, in order: the same turn as the service's.
      for (const [i, turn] of turns.entries()) {
        const service = async () => samples.service.push(await timedReply(agent, postUrl, dep, turn));
        const floor = async () => samples.durable.push(await post());
        for (const step of i % 2 ? [service, floor] : [floor, service]) await step();
      }
    });
  } finally {
    agent.destroy();
    rmSync(dir, { recursive: true, force: true });
  }
  return { service: summary(samples.service), durable: summary(samples.durable) };
}

/** The measured turns as the bare-store baselines replay them. */
export const resolvedTurns = (turns: readonly AwaitingTurn[], dep: Deployed) =>
  turns.map((t) => ({ conversationId: t.conversationId, turnId: t.turnId, deploymentId: dep.deploymentId }));
