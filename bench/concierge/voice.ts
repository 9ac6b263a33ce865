import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { espeakNg } from '../../server/src/concierge/speech/espeak-ng.js';
import { keyboard, silence, spoken } from '../../server/test/audio.js';
import { cpuSeconds } from '../process.js';
import { type Spread, spread } from '../stats.js';
import { api, type BenchSocket, type Deployed, type Frame, provision, replyTo } from './kit.js';
import { nextFrame, openMic, scriptedEngines, speakOnService, streamSpoken } from './open-mic.js';
import { guideDeployment, SECTIONS } from './quality.js';
import { startConcierge } from './service.js';

/**
 * Spoken exchanges per set of engines; open mics at once, step by step, each streaming for
 * `micSeconds`, until a step's mics cost more than `coreShare` of a core each, its questions go
 * unanswered, or their replies come half as late again as with the fewest mics.
 */
export const VOICE = {
  exchanges: 12,
  micSteps: [25, 50, 100, 150, 200, 300],
  micSeconds: 20,
  coreShare: 0.01,
  /** Mics a deployment: one deployment's speech budget (600 utterances a minute) is a customer's limit, not the node's. */
  micsPerDeployment: 25,
} as const;

/** A spoken exchange split into where its time went (ms, each a p50 and p95 over the exchanges). */
export interface ExchangeFigures {
  /** The last sample of the visitor's speech sent → the first sample of the reply's audio received. */
  total: Spread;
  /**
   * From the last sound to the turn's end: the voice activity model hearing the speech stop, then
   * `silence_ms` of quiet (longer when the words sound unfinished or the recogniser is slower).
   * Settings and the model's hangover, not work: the whole less what the service timed after the end.
   */
  endOfTurn: Spread;
  /** The recogniser's time as the service timed its call (`recognition_ms`), run while the quiet is waited for. */
  recogniser: Spread;
  /**
   * The synthesiser's time to the first audio of the reply's first sentence, measured apart in the
   * same run; 0 for a sentence said before in the run, which the service's cache of sentences serves.
   */
  synthesiser: Spread;
  /** Exchanges whose first sentence the cache served. */
  cached: number;
  /**
   * From the turn's end to its reply's first audio sent, by the service's clock (`first_audio_ms`
   * less `end_of_turn_ms`), less the synthesiser: the service's own share (the turn stored, the
   * hook called and the reply stored, or the knowledge responder's search; the audio sent).
   */
  service: Spread;
  /** What the service heard and answered in the first exchange measured (a sample for the reader). */
  heard: string;
}

/** One step of open mics: each streams questions, quiet and typing in real time. */
export interface MicStep {
  mics: number;
  /** The node's CPU per mic over the step, as a share of one core. */
  coreShare: number;
  /** The node's CPU over the step, in cores. */
  cores: number;
  /** This process's CPU over the step, in cores: the visitors' side, on the same machine. */
  clientCores: number;
  asked: number;
  answered: number;
  /** A question's audio all sent (its file's end) → its reply's first audio, under this load. */
  toAudio: Spread;
}

export interface VoiceFigures {
  scripted: ExchangeFigures;
  local: ExchangeFigures;
  mics: MicStep[];
}

interface Exchange {
  conversationId: string;
  total: number;
  reply: string;
}

/**
 * A visitor per exchange opens the mic hands-free, asks `question` at the pace it is spoken, then
 * stays quiet; timed from the last sample of speech sent to the first audio frame received.
 */
async function exchanges(serviceUrl: string, dep: Deployed, question: (i: number) => Buffer): Promise<Exchange[]> {
  const done: Exchange[] = [];
  for (let i = -1; i < VOICE.exchanges; i++) {
    const socket = await openMic(serviceUrl, dep, `voice-${i}`);
    let reply = '';
    const replied = (f: Frame) => {
      if (f.type === 'reply' || f.type === 'reply_part') reply ||= String(f.text);
      return f.type === 'pcm';
    };
    const audio = nextFrame(socket, replied);
    const speech = question(Math.max(i, 0));
    const started = await streamSpoken(socket, speech);
    const speechEnded = started + lastSpeechMs(speech);
    const quiet = streamSpoken(socket, silence(3_000));
    const total = (await audio) - speechEnded;
    await quiet;
    socket.close();
    // The first exchange warms the engines up and is not counted.
    if (i >= 0) done.push({ conversationId: socket.conversationId, total, reply });
  }
  return done;
}

/** Where the speech in `pcm` ends (ms): espeak-ng leaves quiet after it, which is not speech. */
function lastSpeechMs(pcm: Buffer): number {
  const window = 320; // 10 ms of 16 kHz samples
  for (let end = Math.floor(pcm.length / 2); end > 0; end -= window) {
    let sum = 0;
    for (let i = Math.max(0, end - window); i < end; i++) sum += pcm.readInt16LE(i * 2) ** 2;
    if (Math.sqrt(sum / window) > 300) return (end / 16_000) * 1000;
  }
  return 0;
}

const firstSentence = (text: string) => /^.*?[.!?](?=\s|$)/s.exec(text)?.[0] ?? text;

/** Each exchange split by what its turn recorded and the synthesiser's time for its first sentence. */
async function split(
  serviceUrl: string,
  apiKey: string,
  done: Exchange[],
  synthesise: (text: string) => Promise<number>,
): Promise<ExchangeFigures> {
  const parts = { total: [] as number[], endOfTurn: [] as number[], recogniser: [] as number[] };
  const synthesiser: number[] = [];
  const service: number[] = [];
  const said = new Set<string>();
  let heard = '';
  for (const exchange of done) {
    const conversation = await api(serviceUrl, apiKey, 'GET', `/api/v1/conversations/${exchange.conversationId}`);
    const turn = conversation.turns.find((t: { voice: unknown }) => t.voice);
    const voice = turn?.voice;
    heard ||= `"${turn?.text}" → "${exchange.reply}"`;
    if (!voice) throw new Error(`conversation ${exchange.conversationId}: no hands-free turn`);
    const sentence = firstSentence(exchange.reply);
    const synthesis = said.has(sentence) ? 0 : await synthesise(sentence);
    said.add(sentence);
    if (voice.first_audio_ms === null) throw new Error(`conversation ${exchange.conversationId}: reply not spoken`);
    const afterTurn = voice.first_audio_ms - voice.end_of_turn_ms;
    parts.total.push(exchange.total);
    parts.endOfTurn.push(exchange.total - afterTurn);
    parts.recogniser.push(voice.recognition_ms);
    synthesiser.push(synthesis);
    service.push(afterTurn - synthesis);
  }
  return {
    total: spread(parts.total),
    endOfTurn: spread(parts.endOfTurn),
    recogniser: spread(parts.recogniser),
    synthesiser: spread(synthesiser),
    service: spread(service),
    cached: done.length - said.size,
    heard,
  };
}

/** Time to the first audio of `text` from an OpenAI-compatible speech endpoint (ms). */
async function firstAudioOver(url: string, text: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tts-1', input: text, voice: 'alloy', response_format: 'pcm', speed: 1 }),
  });
  if (!res.ok || !res.body) throw new Error(`speech endpoint: ${res.status}`);
  const reader = res.body.getReader();
  await reader.read();
  const took = performance.now() - started;
  await reader.cancel();
  return took;
}

/** Time to the first audio of `text` from espeak-ng as the service runs it (ms). */
async function firstAudioOfEspeak(text: string): Promise<number> {
  const started = performance.now();
  let first = 0;
  await espeakNg().synthesise(
    { text, voice: undefined, speed: 1, language: 'en-US' },
    () => (first ||= performance.now()),
    new AbortController().signal,
  );
  if (!first) throw new Error(`espeak-ng said nothing for "${text}"`);
  return first - started;
}

/** Open mics, `count` at once, each asking a question every round and staying quiet or typing between. */
async function micStep(
  serviceUrl: string,
  deps: readonly Deployed[],
  pid: number,
  count: number,
  question: Buffer,
  step: number,
): Promise<MicStep> {
  const round = Buffer.concat([question, silence(2_500), keyboard(1_500)]);
  const rounds = Math.max(1, Math.floor((VOICE.micSeconds * 32_000) / round.length));
  const sockets: BenchSocket[] = [];
  for (let i = 0; i < count; i += 25)
    sockets.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(25, count - i) }, (_, k) =>
          openMic(serviceUrl, deps[Math.floor((i + k) / VOICE.micsPerDeployment)]!, `mic-${step}-${i + k}`),
        ),
      )),
    );
  let asked = 0;
  const toAudio: number[] = [];
  const cpuBefore = cpuSeconds(pid);
  const clientBefore = process.cpuUsage();
  const wallStarted = performance.now();
  await Promise.all(
    sockets.map(async (socket, s) => {
      // Spread over a round, as visitors do not all speak at once.
      await new Promise((r) => setTimeout(r, (s / count) * (round.length / 32)));
      for (let r = 0; r < rounds; r++) {
        asked++;
        const audio = Promise.race([
          nextFrame(socket, (f) => f.type === 'pcm'),
          new Promise<number>((resolve) => setTimeout(() => resolve(0), round.length / 32)),
        ]);
        const started = await streamSpoken(socket, question);
        const quiet = streamSpoken(socket, round.subarray(question.length));
        const at = await audio;
        if (at) toAudio.push(at - (started + question.length / 32));
        await quiet;
      }
    }),
  );
  const seconds = (performance.now() - wallStarted) / 1000;
  const cores = (cpuSeconds(pid) - cpuBefore) / seconds;
  const client = process.cpuUsage(clientBefore);
  const clientCores = (client.user + client.system) / 1e6 / seconds;
  for (const socket of sockets) socket.close();
  return {
    mics: count,
    coreShare: cores / count,
    cores,
    clientCores,
    asked,
    answered: toAudio.length,
    toAudio: spread(toAudio),
  };
}

/**
 * `npm run bench -- voice` (README, Hands-free voice): a whole spoken exchange on a compiled
 * service, timed from the last sample of the visitor's speech sent over the socket to the first
 * sample of the reply's audio received, split into the wait for quiet, the engines' own time and
 * the service's share; first with a scripted recogniser, the customer's server and a scripted
 * synthesiser answering at once, then with this machine's engines (PocketSphinx, the knowledge
 * responder, espeak-ng); then open mics, more at each step.
 */
export async function voiceFigures(): Promise<VoiceFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'concierge-voice-bench-'));
  const said = SECTIONS.map(([, , question]) => spoken(question, dir));
  rmSync(dir, { recursive: true, force: true });

  const scriptedSpeech = await scriptedEngines();
  const breakfast = scriptedSpeech.question;
  const agent = new Agent({ keepAlive: true });
  const speechEnv = { SPEECH_CONCURRENCY: '256', TEXT_TO_SPEECH_CONCURRENCY: '256' };
  let scripted: ExchangeFigures;
  const mics: MicStep[] = [];
  const secrets = new Map<string, string>();
  let replies = 0;
  const hooked = await startConcierge(
    (call) => {
      const deploymentId = /\/concierge\/([^/]+)\/replies$/.exec(call.reply_url)![1]!;
      // A new first sentence each time: none is served from the cache of sentences already said.
      const reply = `Breakfast is from seven, guest ${++replies}. It is served in the garden.`;
      void replyTo(agent, secrets.get(deploymentId)!, call, reply);
    },
    { env: { ...scriptedSpeech.env, ...speechEnv } },
  );
  try {
    const node = hooked.nodes[0]!;
    secrets.set(hooked.dep.deploymentId, hooked.dep.secret);
    await speakOnService(node.url, hooked.apiKey, hooked.dep);
    const done = await exchanges(node.url, hooked.dep, () => breakfast);
    scripted = await split(node.url, hooked.apiKey, done, (text) =>
      firstAudioOver(scriptedSpeech.synthesiserUrl, text),
    );
    const { channel_config } = await api(
      node.url,
      hooked.apiKey,
      'GET',
      `/api/v1/deployments/${hooked.dep.deploymentId}`,
    );
    const deps: Deployed[] = [];
    for (const [step, count] of VOICE.micSteps.entries()) {
      while (deps.length * VOICE.micsPerDeployment < count) {
        const dep = await provision(node.url, hooked.apiKey, channel_config.hook_url);
        secrets.set(dep.deploymentId, dep.secret);
        await speakOnService(node.url, hooked.apiKey, dep);
        deps.push(dep);
      }
      const measured = await micStep(node.url, deps, node.child.pid!, count, breakfast, step);
      mics.push(measured);
      const behind = measured.toAudio.p50 > mics[0]!.toAudio.p50 * 1.5;
      if (measured.coreShare > VOICE.coreShare || measured.answered < measured.asked * 0.95 || behind) break;
    }
  } finally {
    await hooked.stop();
    await scriptedSpeech.close();
    agent.destroy();
  }

  let local: ExchangeFigures;
  const engines = await startConcierge(() => {}, {
    env: { SPEECH_TO_TEXT: 'pocketsphinx', TEXT_TO_SPEECH: 'espeak-ng', ...speechEnv },
  });
  try {
    const node = engines.nodes[0]!;
    const { dep } = await guideDeployment(node.url, engines.apiKey);
    await speakOnService(node.url, engines.apiKey, dep);
    const done = await exchanges(node.url, dep, (i) => said[i % said.length]!);
    local = await split(node.url, engines.apiKey, done, firstAudioOfEspeak);
  } finally {
    await engines.stop();
  }
  return { scripted, local, mics };
}
