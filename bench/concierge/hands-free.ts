import { Agent } from 'node:http';
import { silence } from '../../server/test/audio.js';
import { spread } from '../stats.js';
import { type BenchSocket, replyTo } from './kit.js';
import {
  nextFrame as next,
  openMic,
  PIECE_MS,
  scriptedEngines,
  speakOnService,
  streamSpoken as stream,
} from './open-mic.js';
import { startConcierge } from './service.js';

export const HANDS_FREE = {
  turns: 20,
  interruptions: 12,
  pieceMs: PIECE_MS,
  silenceMs: 600,
  minSpeechMs: 300,
} as const;

/** What was measured, in ms: each a p50 and p95 over its rounds. */
export interface HandsFreeFigures {
  /** From the end of the visitor's speech (the last sample of it sent) to the first audio frame of the reply received. */
  endOfSpeechToAudio: { p50: number; p95: number };
  /** From the first sample of speech over the agent's voice sent to `interrupt` received. */
  speechToInterrupt: { p50: number; p95: number };
}

/**
 * Hands-free voice on a compiled service (README, Hands-free voice), its recogniser, responder
 * (the customer's server replying as its hook is called) and synthesiser all in this process and
 * answering at once: a visitor's open mic streamed in real time, a question and quiet in turn, the
 * wait from the end of each question to the reply's first audio; then, while a long reply plays,
 * speech over it, and the wait to `interrupt`.
 */
export async function handsFreeFigures(): Promise<HandsFreeFigures> {
  const engines = await scriptedEngines();
  const { question } = engines;
  const agent = new Agent({ keepAlive: true });
  let reply = 'From seven.';
  const concierge = await startConcierge((call, dep) => void replyTo(agent, dep.secret, call, reply), {
    env: { ...engines.env, SPEECH_CONCURRENCY: '16' },
  });
  try {
    const node = concierge.nodes[0]!;
    await speakOnService(node.url, concierge.apiKey, concierge.dep);
    // A visitor speaks at most 12 turns a minute (README, Voice in every browser: budgets): a new one every 8.
    let socket: BenchSocket | undefined;
    let visitors = 0;
    const visitor = async () => {
      socket?.close();
      socket = await openMic(node.url, concierge.dep, `visitor-${++visitors}`);
      return socket;
    };

    const toAudio: number[] = [];
    for (let i = 0; i < HANDS_FREE.turns; i++) {
      if (i % 8 === 0) socket = await visitor();
      const audio = next(socket!, (f) => f.type === 'pcm');
      const started = await stream(socket!, question);
      const speechEnded = started + (question.length / 32_000) * 1000;
      const quiet = stream(socket!, silence(2_500));
      toAudio.push((await audio) - speechEnded);
      await quiet;
    }

    // A reply long enough to be spoken over (20 ms of audio a character on this synthesiser).
    reply = 'Our rooms all face the garden, and each has a balcony with two chairs. '.repeat(4);
    const toInterrupt: number[] = [];
    for (let i = 0; i < HANDS_FREE.interruptions; i++) {
      if (i % 4 === 0) socket = await visitor();
      const audio = next(socket!, (f) => f.type === 'pcm');
      await stream(socket!, question);
      const quiet = stream(socket!, silence(1_500));
      await audio;
      await quiet;
      const interrupted = next(socket!, (f) => f.type === 'interrupt');
      const started = await stream(socket!, question);
      toInterrupt.push((await interrupted) - started);
      await stream(socket!, silence(2_000));
    }
    socket!.close();
    return { endOfSpeechToAudio: spread(toAudio), speechToInterrupt: spread(toInterrupt) };
  } finally {
    await concierge.stop();
    await engines.close();
    agent.destroy();
  }
}
