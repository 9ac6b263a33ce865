import { spawn } from 'node:child_process';
import { chromium } from '@playwright/test';
import { scriptedSpeech } from '../../e2e/scripted-speech.js';
import { CHROMIUM } from '../../e2e/chromium.js';
import { Stack } from '../../e2e/stack.js';
import { Agent } from 'node:http';
import { signBody } from '../../sdk/node/src/index.js';
import { pcmOf, type SpeechBehaviour, startSpeechServer } from '../../server/test/speech-server.js';
import { cpuSeconds, MEASURED_MEMORY_ARGS } from '../process.js';
import { quantile } from '../stats.js';
import { BenchSocket, type Deployed, FrameLog, type HookCall, post } from './kit.js';
import { startConcierge } from './service.js';
import { askAloud } from './streaming.js';

export const SYNTHESIS = {
  replies: 300,
  warmUp: 30,
  espeakReplies: 100,
  listeners: 20,
  listeningS: 20,
  held: 200,
} as const;

type Quantiles = { p50: number; p99: number };
const q = (xs: number[], warmUp: number): Quantiles => ({
  p50: quantile(xs.slice(warmUp), 0.5),
  p99: quantile(xs.slice(warmUp), 0.99),
});

export interface SynthesisFigures {
  /** A reply part's POST sent → the first audio frame on the visitor's socket, and the synthesiser's own first byte (ms). */
  partToAudio: Quantiles;
  synthesiser: Quantiles;
  /** The service's CPU per visitor while `listeners` hear replies in real time, as a share of one core. */
  cpuPerListener: number;
  /** Resident memory per reply being spoken (its synthesis streaming, its audio on the way). */
  bytesPerSpokenReply: number;
}

/** The visitor's socket, its frames kept; binary ones are the agent's voice. */
class Listener extends FrameLog {
  static async open(url: string, dep: Deployed, sub: string): Promise<Listener> {
    return new Listener(await BenchSocket.session(url, dep, sub));
  }

  /** A voice turn, acknowledged by the customer's 202: its hook call. */
  async ask(id: string, hooked: Map<string, (call: HookCall) => void>): Promise<HookCall> {
    const call = new Promise<HookCall>((resolve) => hooked.set(this.socket.conversationId, resolve));
    const from = this.frames.length;
    this.socket.ws.send(JSON.stringify({ type: 'user_turn', client_turn_id: id, text: 'Tell me more', mode: 'voice' }));
    await this.next((f) => f.type === 'turn_acknowledged', from);
    return call;
  }
}

const sign = (dep: Deployed, call: HookCall, fields: object) => {
  const body = JSON.stringify({ conversation_id: call.conversation_id, turn_id: call.turn_id, ...fields });
  return { body, headers: { 'x-service-signature': signBody(dep.secret, body) } };
};

/** Parts POSTed one after another, each a new sentence: POST sent → first audio frame, over `count` turns. */
async function partToAudio(
  url: string,
  dep: Deployed,
  hooked: Map<string, (call: HookCall) => void>,
  count: number,
): Promise<number[]> {
  const agent = new Agent({ keepAlive: true });
  const listener = await Listener.open(url, dep, 'listener');
  const samples: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const call = await listener.ask(`t${i}`, hooked);
      // A sentence never said before: nothing comes from the cache.
      const { body, headers } = sign(dep, call, { part: 0, text: `Breakfast is served from seven, guest ${i}. ` });
      const from = listener.frames.length;
      const started = performance.now();
      const status = await post(agent, call.reply_url, body, headers);
      if (status !== 202) throw new Error(`part refused: ${status}`);
      const first = await listener.next((f) => f.type === 'pcm' || f.type === 'speech_unavailable', from);
      if (first.frame.type !== 'pcm') throw new Error('the synthesiser failed a sentence');
      samples.push(performance.now() - started);
      const whole = sign(dep, call, { reply_text: `Breakfast is served from seven, guest ${i}.` });
      await post(agent, call.reply_url, whole.body, whole.headers);
      await listener.next((f) => f.type === 'speech_end', first.at);
    }
  } finally {
    listener.socket.close();
    agent.destroy();
  }
  return samples;
}

/** A service whose customer answers each turn with 202 and leaves the reply to the bench. */
async function voiceService(env: NodeJS.ProcessEnv) {
  const hooked = new Map<string, (call: HookCall) => void>();
  const concierge = await startConcierge((call) => hooked.get(call.conversation_id)?.(call), {
    env,
    nodeArgs: MEASURED_MEMORY_ARGS,
  });
  const node = concierge.nodes[0]!;
  const res = await fetch(`${node.url}/api/v1/deployments/${concierge.dep.deploymentId}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${concierge.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      runtime_config: { reply_timeout_s: 3600, hook_timeout_ms: 15_000, speech_synthesis: 'service' },
      engagement_rules: { max_pending_turns: 50, turns_per_minute: 600, max_turns_per_conversation: 10_000 },
    }),
  });
  if (!res.ok) throw new Error(`PUT deployment: ${res.status}`);
  return { concierge, node, hooked };
}

/** An OpenAI-compatible synthesiser that answers at once (a speech server in this process), the service compiled, on SQLite. */
export async function synthesisFigures(): Promise<SynthesisFigures> {
  // All of a sentence's audio at once: the service's time is all there is to see.
  const atOnce: SpeechBehaviour = (call, res) =>
    res.writeHead(200, { 'content-type': 'audio/pcm' }).end(pcmOf(String(call.body.input)));
  const speech = await startSpeechServer(atOnce);
  const { concierge, node, hooked } = await voiceService({
    TEXT_TO_SPEECH_URL: speech.url,
    TEXT_TO_SPEECH_CONCURRENCY: '64',
  });
  try {
    // Memory, measured first while the process is fresh: replies being spoken, each sentence's synthesis half streamed and held there.
    const agent = new Agent({ keepAlive: true });
    speech.state.behaviour = (call, res) => {
      const pcm = pcmOf(String(call.body.input));
      res.writeHead(200, { 'content-type': 'audio/pcm' }).write(pcm.subarray(0, (pcm.length >> 2) * 2));
    };
    // Twice: the first round grows the heap to its working size, the second is measured.
    const heldRound = async (round: number) => {
      const holders = await Promise.all(
        Array.from({ length: SYNTHESIS.held }, (_, i) => Listener.open(node.url, concierge.dep, `held-${round}-${i}`)),
      );
      const before = await node.settledRss();
      await Promise.all(
        holders.map(async (holder, i) => {
          const call = await holder.ask(`h${i}`, hooked);
          const { body, headers } = sign(concierge.dep, call, {
            reply_text: `This reply for guest ${round}-${i} is being spoken. Its next sentence is being made.`,
          });
          await post(agent, call.reply_url, body, headers);
          await holder.next((f) => f.type === 'pcm');
        }),
      );
      const after = await node.settledRss();
      for (const holder of holders) holder.socket.close();
      return after - before;
    };
    await heldRound(0);
    const held = await heldRound(1);
    // The synthesiser answers at once again.
    speech.state.behaviour = atOnce;
    const latency = await partToAudio(node.url, concierge.dep, hooked, SYNTHESIS.replies);
    const synthesiser: number[] = [];
    for (let i = 0; i < SYNTHESIS.replies; i++) {
      const started = performance.now();
      const res = await fetch(speech.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'tts-1',
          input: `Breakfast is served from seven, guest ${i}.`,
          voice: 'alloy',
          speed: 1,
          response_format: 'pcm',
        }),
      });
      await res.body!.getReader().read();
      synthesiser.push(performance.now() - started);
    }

    // CPU: visitors hearing three-sentence replies in real time, telling what they heard, one after another.
    const listeners = await Promise.all(
      Array.from({ length: SYNTHESIS.listeners }, (_, i) => Listener.open(node.url, concierge.dep, `ear-${i}`)),
    );
    const cpuBefore = cpuSeconds(node.child.pid!);
    const wallStarted = performance.now();
    await Promise.all(
      listeners.map(async (listener, l) => {
        for (let t = 0; performance.now() - wallStarted < SYNTHESIS.listeningS * 1000; t++) {
          const call = await listener.ask(`l${l}-${t}`, hooked);
          const text = `Room ${t} looks over the harbour. It has a deep bath for guest ${l}. Breakfast is at seven.`;
          const from = listener.frames.length;
          const { body, headers } = sign(concierge.dep, call, { reply_text: text });
          await post(agent, call.reply_url, body, headers);
          for (let s = 0; s < 3; s++) {
            const end = await listener.next((f) => f.type === 'speech_end' && f.sentence === s, from);
            const head = await listener.next((f) => f.type === 'speech' && f.sentence === s, from);
            const ms = (String(head.frame.text).length * 20) | 0;
            void end;
            // The visitor hears the sentence in real time, then says so.
            await new Promise((r) => setTimeout(r, ms));
            listener.socket.ws.send(
              JSON.stringify({
                type: 'playback',
                turn_id: call.turn_id,
                sentence: s,
                offset_ms: ms,
                state: 'finished',
              }),
            );
          }
        }
      }),
    );
    const cpuPerListener =
      (cpuSeconds(node.child.pid!) - cpuBefore) / ((performance.now() - wallStarted) / 1000) / SYNTHESIS.listeners;
    for (const listener of listeners) listener.socket.close();

    agent.destroy();
    return {
      partToAudio: q(latency, SYNTHESIS.warmUp),
      synthesiser: q(synthesiser, SYNTHESIS.warmUp),
      cpuPerListener,
      bytesPerSpokenReply: held / SYNTHESIS.held,
    };
  } finally {
    await concierge.stop();
    await speech.close();
  }
}

/** espeak-ng on this machine: POST sent → first audio frame, and espeak-ng's own first audio byte (ms). */
export async function espeakFigures(): Promise<{ partToAudio: Quantiles; engine: Quantiles }> {
  const { concierge, node, hooked } = await voiceService({ TEXT_TO_SPEECH: 'espeak-ng' });
  try {
    const latency = await partToAudio(node.url, concierge.dep, hooked, SYNTHESIS.espeakReplies);
    const engine: number[] = [];
    for (let i = 0; i < SYNTHESIS.espeakReplies; i++) {
      const started = performance.now();
      await new Promise<void>((resolve, reject) => {
        const child = spawn('espeak-ng', ['--stdout', '-v', 'en-us', '-s', '175']);
        let bytes = 0;
        let done = false;
        child.stdout.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          // Past its 44-byte header: the first audio.
          if (bytes > 44 && !done) {
            done = true;
            engine.push(performance.now() - started);
            resolve();
          }
        });
        child.on('error', reject);
        child.stdin.end(`Breakfast is served from seven, guest ${i}.`);
      });
    }
    return { partToAudio: q(latency, 10), engine: q(engine, 10) };
  } finally {
    await concierge.stop();
  }
}

/**
 * In Chromium, with espeak-ng: a reply part POSTed → its first audio handed to the widget's playing
 * AudioWorklet (the page's `speech` event), over `count` spoken turns on the demo hotel (ms).
 */
export async function firstSampleInChromium(count = 20): Promise<{ p50: number; max: number }> {
  const stack = await Stack.start({ voice: 'espeak-ng' });
  const browser = await chromium.launch(CHROMIUM);
  const samples: number[] = [];
  try {
    await stack.synthesiseSpeech('service');
    await stack.behave('no_reply');
    const page = await browser.newPage();
    await scriptedSpeech(page);
    await page.goto(stack.demoUrl);
    await page.evaluate(() => {
      const w = globalThis as unknown as {
        __begun: number[];
        Concierge: { on(name: string, handler: () => void): void };
      };
      w.__begun = [];
      w.Concierge.on('speech', () => w.__begun.push(performance.now()));
    });
    await page.getByRole('button', { name: 'Chat with Harbor Hotel' }).click();
    const timeOrigin = await page.evaluate(() => performance.timeOrigin);
    for (let i = 0; i < count; i++) {
      // A sentence never said before: nothing comes from the cache.
      const { turn, posted } = await askAloud(page, stack, i, `Dinner is served from 6 to 10 pm, guest ${i}. `);
      const begun = await page.waitForFunction((n) => (globalThis as unknown as { __begun: number[] }).__begun[n], i, {
        polling: 2,
        timeout: 10_000,
      });
      samples.push(timeOrigin + ((await begun.jsonValue()) as number) - posted);
      await stack.reply(turn, { reply_text: `Dinner is served from 6 to 10 pm, guest ${i}.` });
      // The sentence plays out (under 3 s) before the next question.
      await page.waitForTimeout(3_000);
    }
  } finally {
    await browser.close();
    await stack.stop();
  }
  return { p50: quantile(samples, 0.5), max: Math.max(...samples) };
}
