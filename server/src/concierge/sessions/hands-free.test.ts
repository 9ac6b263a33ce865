import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploy, mintToken, postReply, startCustomerServer, Widget } from '../../../test/concierge-kit.js';
import {
  createReadyAgent,
  describeEachStore,
  startService,
  type StoreKind,
  type TestService,
  waitFor,
} from '../../../test/harness.js';
import { cough, keyboard, silence, spoken, whiteNoise } from '../../../test/audio.js';
import { startSpeechServer } from '../../../test/speech-server.js';
import { startTranscriptionServer, type Upload } from '../../../test/transcription-server.js';

const CHUNK_MS = 100;

/** Sends `pcm` as the widget does, 100 ms a frame, at the pace it is spoken. */
async function stream(widget: Widget, ...pieces: Buffer[]): Promise<void> {
  const pcm = Buffer.concat(pieces);
  const bytes = (CHUNK_MS * 32_000) / 1000;
  const started = performance.now();
  for (let at = 0, n = 0; at < pcm.length; at += bytes, n++) {
    widget.ws.send(pcm.subarray(at, at + bytes));
    const due = started + (n + 1) * CHUNK_MS;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
  }
}

const of = (widget: Widget, type: string) => widget.frames.filter((f) => f.type === type);

describeEachStore('hands-free voice', (kind: StoreKind) => {
  let service: TestService;
  let customer: Awaited<ReturnType<typeof startCustomerServer>>;
  let transcriber: Awaited<ReturnType<typeof startTranscriptionServer>>;
  let speech: Awaited<ReturnType<typeof startSpeechServer>>;
  /** What the scripted recogniser hears in each upload. */
  let hears: (upload: Upload, n: number) => string = () => '';
  let dir: string;
  let said: { hello: Buffer; question: Buffer; short: Buffer };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hands-free-'));
    said = {
      hello: spoken('I would like to book a room', dir),
      question: spoken('What time is breakfast served', dir),
      short: spoken('hello there', dir),
    };
    let n = 0;
    transcriber = await startTranscriptionServer((upload, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ text: hears(upload, n++) })),
    );
    speech = await startSpeechServer();
    customer = await startCustomerServer();
    service = await startService(kind, {
      env: { SPEECH_TO_TEXT_URL: transcriber.url, TEXT_TO_SPEECH_URL: speech.url },
    });
  });
  afterAll(async () => {
    await service?.close();
    await customer?.close();
    await transcriber?.close();
    await speech?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const open = async (voice: Record<string, unknown> = {}, runtime: Record<string, unknown> = {}) => {
    const deployed = await deploy(service, { hook_url: customer.hookUrl }, { runtime_config: runtime });
    if (Object.keys(voice).length) {
      const { api } = deployed;
      const dep = (await api.get(`/api/v1/deployments/${deployed.deploymentId}`)).body.data;
      const saved = await api.put(`/api/v1/agents/${dep.agent_id}`, { draft_spec: { voice } });
      expect(saved.status).toBe(200);
      expect((await api.post(`/api/v1/agents/${dep.agent_id}/publish`)).status).toBe(200);
    }
    const widget = await Widget.open(service, deployed.deploymentId);
    const ready = await widget.hello(await mintToken(deployed.secret, deployed.deploymentId), {
      browser_recognition: false,
    });
    return { ...deployed, widget, ready, conversationId: ready.conversation_id as string };
  };
  const listen = (widget: Widget) =>
    widget.send({ type: 'audio_start', mode: 'hands_free', client_turn_id: 'mic', sample_rate: 16000 });

  it('finds two questions in one open mic, waits through a pause after an unfinished "and", and records what each took', async () => {
    const words = ['I would like to book a room and', 'for two nights', 'What time is breakfast served'];
    hears = () => words.shift() ?? '';
    const d = await open();
    expect(d.ready.speech).toEqual({ recognition: 'service', synthesis: 'service', mode: 'hands_free' });
    listen(d.widget);
    const uploads = transcriber.uploads.length;
    // 700 ms of quiet inside the first question: longer than silence_ms, shorter than the wait after "and".
    await stream(d.widget, silence(400), said.hello, silence(700), said.short, silence(2_600));
    const first = await d.widget.next('turn_accepted');
    expect(first).toMatchObject({
      client_turn_id: 'mic:1',
      text: 'I would like to book a room and for two nights',
      mode: 'voice',
    });
    expect(of(d.widget, 'transcript_partial').map((f) => f.text)).toEqual([
      'I would like to book a room and',
      'I would like to book a room and for two nights',
    ]);
    await stream(d.widget, said.question, silence(1_200));
    const second = await d.widget.next('turn_accepted');
    expect(second).toMatchObject({ client_turn_id: 'mic:2', text: 'What time is breakfast served' });
    expect(transcriber.uploads.length - uploads).toBe(3);
    expect(of(d.widget, 'speech_started')).toHaveLength(3);
    expect(of(d.widget, 'speech_stopped')).toHaveLength(3);
    expect(of(d.widget, 'transcribing')).toHaveLength(0);

    // The reply's first audio is measured from the end of the visitor's speech.
    expect(
      (
        await postReply(
          service,
          d.deploymentId,
          { conversation_id: d.conversationId, turn_id: second.turn_id, reply_text: 'From seven.' },
          d.secret,
        )
      ).status,
    ).toBe(202);
    await d.widget.next('speech_end');
    const turns = await waitFor(async () => {
      const detail = (await d.api.get(`/api/v1/conversations/${d.conversationId}`)).body.data;
      return detail.turns[1].voice.first_audio_ms !== null && detail.turns;
    });
    const [one, two] = turns;
    expect(one.voice).toEqual({
      speech_ms: expect.any(Number),
      end_of_turn_ms: expect.any(Number),
      recognition_ms: expect.any(Number),
      first_audio_ms: null,
    });
    // The quiet that ended it: at least silence_ms after the last word ("nights" is not unfinished).
    expect(one.voice.end_of_turn_ms).toBeGreaterThanOrEqual(600);
    expect(one.voice.end_of_turn_ms).toBeLessThan(2_000);
    expect(one.voice.speech_ms).toBeGreaterThan(1_000);
    expect(one.recognition).toMatchObject({ engine: 'openai-compatible' });
    expect(two.voice.first_audio_ms).toBeGreaterThan(0);
    expect(two.voice.first_audio_ms).toBeLessThan(30_000);

    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    const analytics = await d.api.get(
      `/api/v1/analytics?from=${hour.toISOString()}&to=${new Date(hour.getTime() + 3_600_000).toISOString()}&interval=hour&deployment_id=${d.deploymentId}`,
    );
    expect(analytics.body.data.totals.voice_to_voice_ms).toMatchObject({ count: 1 });
    d.widget.send({ type: 'audio_end', client_turn_id: 'mic' });
    d.widget.close();
  });

  it('hears no speech in a cough, keyboard clicks or white noise as loud as speech: nothing recognised, nothing counted', async () => {
    hears = () => 'should not be asked';
    const d = await open();
    listen(d.widget);
    const uploads = transcriber.uploads.length;
    await stream(d.widget, silence(300), cough(), silence(400), keyboard(1_500), whiteNoise(1_500, 0.1), silence(800));
    d.widget.send({ type: 'ping' });
    await d.widget.next('pong');
    expect(of(d.widget, 'speech_started')).toEqual([]);
    expect(transcriber.uploads.length).toBe(uploads);
    d.widget.close();
  });

  it('stops the agent when the visitor speaks over it, and not for an "mm-hm" or its own words coming back: interrupt, or resume after resume_after_ms', async () => {
    const d = await open({ interruption: { min_speech_ms: 300, resume_after_ms: 500 } });
    listen(d.widget);
    const ask = async (text: string) => {
      hears = () => text;
      await stream(d.widget, said.short, silence(1_000));
      const accepted = await d.widget.next('turn_accepted');
      const long = 'Our rooms all face the garden and each has a balcony with chairs and a small table for breakfast. ';
      await postReply(
        service,
        d.deploymentId,
        { conversation_id: d.conversationId, turn_id: accepted.turn_id, reply_text: long.repeat(5) },
        d.secret,
      );
      await d.widget.next('speech');
      return accepted.turn_id as string;
    };

    const first = await ask('Tell me about the rooms');
    // A cough over the reply: not speech at all.
    const started = of(d.widget, 'speech_started').length;
    await stream(d.widget, cough(), silence(400));
    expect(of(d.widget, 'speech_started')).toHaveLength(started);

    // An "mm-hm" over the reply: lowered, then back; never stopped.
    hears = () => 'mm-hm';
    await stream(d.widget, silence(300), said.short, silence(600));
    expect(await d.widget.next('resume')).toEqual({ type: 'resume', turn_id: first });
    expect(of(d.widget, 'interrupt')).toEqual([]);

    // The agent's own words coming back through a microphone without echo cancellation: not an interruption.
    hears = () => 'face the garden and each has a balcony';
    await stream(d.widget, said.short, silence(600));
    expect(await d.widget.next('resume')).toEqual({ type: 'resume', turn_id: first });
    expect(of(d.widget, 'interrupt')).toEqual([]);
    expect(of(d.widget, 'turn_accepted')).toHaveLength(1);

    // Real words over it: interrupted, and no more of its audio.
    hears = () => 'Wait, how much is it';
    await stream(d.widget, said.question);
    expect(await d.widget.next('interrupt')).toEqual({ type: 'interrupt', turn_id: first });
    const cut = d.widget.frames.length;
    await stream(d.widget, silence(1_500));
    const accepted = await d.widget.next('turn_accepted');
    expect(accepted.text).toBe('Wait, how much is it');
    const after = d.widget.frames.slice(cut).filter((f) => f.type === 'speech' && f.turn_id === first);
    expect(after).toEqual([]);
    d.widget.close();
  });

  it('asks a quiet visitor once if they are still there, in their language, then closes the mic: listening_stopped silence', async () => {
    const d = await open({ reengage_after_s: 1, close_after_s: 1 });
    listen(d.widget);
    await stream(d.widget, silence(3_000));
    const asked = await d.widget.next('reengaged');
    expect(asked.text).toBe('Are you still there?');
    expect(await d.widget.next('listening_stopped', 8_000)).toEqual({ type: 'listening_stopped', reason: 'silence' });
    expect(of(d.widget, 'reengaged')).toHaveLength(1);
    // Its frames are ignored until the widget ends the mic; then it may open again.
    d.widget.ws.send(silence(100));
    d.widget.send({ type: 'audio_end', client_turn_id: 'mic' });
    listen(d.widget);
    d.widget.send({ type: 'ping' });
    await d.widget.next('pong');
    expect(of(d.widget, 'error')).toEqual([]);
    d.widget.close();
  });

  it('closes the mic when the conversation ends: listening_stopped ended', async () => {
    const d = await open();
    listen(d.widget);
    await stream(d.widget, silence(300));
    d.widget.send({ type: 'end' });
    expect(await d.widget.next('conversation_ended')).toMatchObject({ reason: 'user_ended' });
    expect(await d.widget.next('listening_stopped')).toEqual({ type: 'listening_stopped', reason: 'ended' });
  });

  it('with a person in the conversation, never asks if the visitor is still there: the mic stays open and their words reach the person', async () => {
    hears = () => 'Is the pool heated';
    const d = await open({ reengage_after_s: 1, close_after_s: 1 });
    expect((await d.api.post(`/api/v1/conversations/${d.conversationId}/takeover`, { name: 'Maria' })).status).toBe(
      200,
    );
    await d.widget.next('operator_joined');
    listen(d.widget);
    // Longer than reengage_after_s and close_after_s together, with nothing awaited: no question, the mic open.
    await stream(d.widget, silence(3_000));
    expect(of(d.widget, 'reengaged')).toEqual([]);
    expect(of(d.widget, 'listening_stopped')).toEqual([]);
    await stream(d.widget, said.short, silence(1_000));
    expect(await d.widget.next('turn_accepted')).toMatchObject({ text: 'Is the pool heated', mode: 'voice' });
    d.widget.close();
  });

  it('refuses hands-free where the deployment is push-to-talk or the service does not recognise, and a second open mic', async () => {
    const ptt = await open({}, { voice_mode: 'push_to_talk' });
    expect(ptt.ready.speech.mode).toBe('push_to_talk');
    listen(ptt.widget);
    expect(await ptt.widget.next('error')).toEqual({
      type: 'error',
      code: 'invalid_message',
      message:
        "This deployment's visitors press the mic for each utterance (runtime_config.voice_mode is push_to_talk)",
    });
    // Its frames are ignored, not a protocol error.
    ptt.widget.ws.send(silence(100));
    ptt.widget.send({ type: 'audio_end', client_turn_id: 'mic' });
    ptt.widget.send({ type: 'ping' });
    await ptt.widget.next('pong');
    ptt.widget.close();

    const d = await open();
    listen(d.widget);
    listen(d.widget);
    expect(await d.widget.next('error')).toEqual({
      type: 'error',
      code: 'invalid_message',
      message: 'The microphone is already streaming: end it with audio_end first',
    });
    d.widget.close();
  });

  it('publishes voice settings only as documented, naming the field', async () => {
    const { api } = await deploy(service, { hook_url: customer.hookUrl });
    const agentId = await createReadyAgent(api);
    await api.put(`/api/v1/agents/${agentId}`, {
      draft_spec: { voice: { end_of_turn: { silence_ms: 900, max_silence_ms: 500 }, close_after_s: -1 } },
    });
    const refused = await api.post(`/api/v1/agents/${agentId}/publish`);
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([
      { path: 'draft_spec.voice.end_of_turn.max_silence_ms', message: 'max_silence_ms must be at least silence_ms' },
      { path: 'draft_spec.voice.close_after_s', message: 'must be from 0 to 600' },
    ]);
  });
});

describe('hands-free budgets', () => {
  let service: TestService;
  let customer: Awaited<ReturnType<typeof startCustomerServer>>;
  let transcriber: Awaited<ReturnType<typeof startTranscriptionServer>>;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hands-free-budget-'));
    transcriber = await startTranscriptionServer((_upload, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"hello there"}'),
    );
    customer = await startCustomerServer();
    service = await startService('sqlite', {
      env: { SPEECH_TO_TEXT_URL: transcriber.url },
      speech: { utterancesPerMinute: { conversation: 1, visitor: 10, deployment: 100 } },
    });
  });
  afterAll(async () => {
    await service?.close();
    await customer?.close();
    await transcriber?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('counts speech, not the open mic: quiet spends nothing, the turn past the budget closes the mic with speech_busy and listening_stopped budget', async () => {
    const d = await deploy(service, { hook_url: customer.hookUrl });
    const widget = await Widget.open(service, d.deploymentId);
    await widget.hello(await mintToken(d.secret, d.deploymentId), { browser_recognition: false });
    widget.send({ type: 'audio_start', mode: 'hands_free', sample_rate: 16000 });
    const words = spoken('hello there', dir);
    // Three seconds of quiet, then the one turn a minute this conversation may speak.
    await stream(widget, silence(3_000), words, silence(1_000));
    const accepted = await widget.next('turn_accepted');
    expect(accepted).toMatchObject({ text: 'hello there', mode: 'voice' });
    // No name for the mic in audio_start: the service made one.
    expect(accepted.client_turn_id).toMatch(/^hf-[0-9a-f-]{36}:1$/);
    await stream(widget, words, silence(300));
    expect(await widget.next('error')).toMatchObject({ type: 'error', code: 'speech_busy' });
    expect(await widget.next('listening_stopped')).toEqual({ type: 'listening_stopped', reason: 'budget' });
    expect(of(widget, 'turn_accepted')).toHaveLength(1);
    widget.close();
  });
});
