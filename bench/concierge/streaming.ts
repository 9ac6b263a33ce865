import { randomUUID } from 'node:crypto';
import { Agent } from 'node:http';
import { chromium, type Page } from '@playwright/test';
import { signBody } from '../../sdk/node/src/index.js';
import { hearWords, scriptedSpeech, spoken } from '../../e2e/scripted-speech.js';
import { CHROMIUM } from '../../e2e/chromium.js';
import { type HookedTurn, Stack } from '../../e2e/stack.js';
import { startTarget } from '../process.js';
import { quantile } from '../stats.js';
import { BenchSocket, type Deployed } from './kit.js';
import { type AwaitingTurn, type Latency, latencyOf, timedPost } from './replies.js';

/** A reply as a language model writes it: 20 parts, one every 20 ms; the first replies warm up. */
export const STREAM = { parts: 20, everyMs: 20, replies: 60, warmUpReplies: 10 };

const partBody = (conversationId: string, turnId: string, part: number) =>
  JSON.stringify({ conversation_id: conversationId, turn_id: turnId, part, text: `word ${part} of the reply, ` });

/**
 * Streams each turn's reply to `url`: its parts on a 20 ms beat, each timed from its POST to the
 * frame carrying it on the turn's socket (ms); with `final`, the whole reply after them, untimed.
 */
async function stream(url: string, secret: string, turns: readonly AwaitingTurn[], final: boolean): Promise<Latency> {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const samples: number[] = [];
  try {
    for (const { socket, conversationId, turnId } of turns) {
      const beat = performance.now();
      for (let part = 0; part < STREAM.parts; part++) {
        const due = beat + part * STREAM.everyMs - performance.now();
        if (due > 0) await new Promise((r) => setTimeout(r, due));
        const body = partBody(conversationId, turnId, part);
        samples.push(
          await timedPost(
            agent,
            url,
            body,
            signBody(secret, body),
            socket,
            (f) => f.turn_id === turnId && f.part === part,
          ),
        );
      }
      if (final) {
        const body = JSON.stringify({
          conversation_id: conversationId,
          turn_id: turnId,
          reply_text: 'The whole reply.',
        });
        await timedPost(
          agent,
          url,
          body,
          signBody(secret, body),
          socket,
          (f) => f.type === 'reply' && f.turn_id === turnId,
        );
      }
    }
  } finally {
    agent.destroy();
  }
  return latencyOf(samples, STREAM.warmUpReplies * STREAM.parts);
}

/** The floor: the same parts on the same beat to a bare node:http server that pushes each body to a bare ws client. */
export async function floorStreaming(): Promise<Latency> {
  const target = await startTarget('bench/targets/bare-push.ts');
  const socket = await BenchSocket.open(target.url.replace(/^http/, 'ws'));
  try {
    const turns = Array.from({ length: STREAM.replies }, () => ({
      socket,
      conversationId: randomUUID(),
      turnId: randomUUID(),
    }));
    return await stream(`${target.url}/embed/concierge/${randomUUID()}/replies`, 'whsec_floor', turns, false);
  } finally {
    socket.close();
    await target.stop();
  }
}

/** The service: each acknowledged turn's reply streamed in parts to the replies route, then posted whole. */
export function serviceStreaming(serviceUrl: string, dep: Deployed, turns: readonly AwaitingTurn[]): Promise<Latency> {
  return stream(`${serviceUrl}/embed/concierge/${dep.deploymentId}/replies`, dep.secret, turns, true);
}

/**
 * From the POST of a voice turn's first part (a complete sentence) to the widget's
 * `speechSynthesis.speak` call, in Debian's Chromium on the demo hotel's page, over loopback (ms):
 * each of `count` turns asked by a scripted recogniser, answered by the bench itself.
 */
export async function firstSpeech(count = 20): Promise<{ p50: number; max: number }> {
  const stack = await Stack.start();
  const browser = await chromium.launch(CHROMIUM);
  const samples: number[] = [];
  try {
    await stack.behave('no_reply');
    const page = await browser.newPage();
    await scriptedSpeech(page);
    await page.goto(stack.demoUrl);
    await page.getByRole('button', { name: 'Chat with Harbor Hotel' }).click();
    // The page's clock: spoken() says when, in the page's performance.now().
    const timeOrigin = await page.evaluate(() => performance.timeOrigin);
    for (let i = 0; i < count; i++) {
      const { turn, posted } = await askAloud(page, stack, i, 'Dinner is served from 6 to 10 pm. ');
      const said = await waitUntil(async () => (await spoken(page))[i]);
      samples.push(timeOrigin + said.at - posted);
      await stack.reply(turn, { reply_text: 'Dinner is served from 6 to 10 pm.' });
    }
  } finally {
    await browser.close();
    await stack.stop();
  }
  return { p50: quantile(samples, 0.5), max: Math.max(...samples) };
}

/**
 * The visitor asks question `i` aloud on the demo hotel (scripted recognition); once the hotel's 202
 * has acknowledged it, the first part of its reply is posted: the turn, and when the part was sent.
 */
export async function askAloud(
  page: Page,
  stack: Stack,
  i: number,
  firstPart: string,
): Promise<{ turn: HookedTurn; posted: number }> {
  const question = `Is dinner served tonight, question ${i}?`;
  await hearWords(page, [question]);
  await page.getByRole('button', { name: 'Speak' }).click();
  const turn = await stack.hookedTurn(question);
  // Acknowledged by the hotel's 202, not yet answered: the first part is what the visitor waits for.
  await page.getByText(question).waitFor();
  await new Promise((r) => setTimeout(r, 100));
  const posted = Date.now();
  if ((await stack.reply(turn, { part: 0, text: firstPart })) !== 202) throw new Error('the first part was refused');
  return { turn, posted };
}

/** Polls until `probe` gives a value (the page's speech is read from outside it). */
async function waitUntil<T>(probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error('the widget never spoke');
}
