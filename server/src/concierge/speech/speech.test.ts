import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { deploy, mintToken, startCustomerServer, Widget } from '../../../test/concierge-kit.js';
import {
  describeEachStore,
  expectError,
  startService,
  type StoreKind,
  type TestService,
  waitFor,
} from '../../../test/harness.js';
import { installed } from '../../../test/service-process.js';
import { hearsLength, startTranscriptionServer } from '../../../test/transcription-server.js';
import { spoken } from '../../../test/audio.js';

/** `ms` of 16 kHz 16-bit mono: a quiet tone, in frames of at most 16 KiB as the widget sends them. */
function audio(ms: number, frameBytes = 16_000): Buffer[] {
  const pcm = Buffer.alloc(ms * 32);
  for (let i = 0; i < pcm.length / 2; i++) pcm.writeInt16LE(Math.round(2000 * Math.sin(i / 8)), i * 2);
  const frames: Buffer[] = [];
  for (let at = 0; at < pcm.length; at += frameBytes) frames.push(pcm.subarray(at, at + frameBytes));
  return frames;
}

/** The next frame of any type, so a test can say nothing else came first. */
async function nextFrame(widget: Widget): Promise<any> {
  const seen = widget.frames.length;
  await waitFor(async () => widget.frames.length > seen, 5_000, 'a frame');
  return widget.frames[seen];
}

/** A transcription server, a customer server and a service recognising through the first, for the tests of one describe block. */
function speechStack(kind: StoreKind, options: (transcriberUrl: string) => Parameters<typeof startService>[1]) {
  const stack = {} as {
    service: TestService;
    transcriber: Awaited<ReturnType<typeof startTranscriptionServer>>;
    customer: Awaited<ReturnType<typeof startCustomerServer>>;
  };
  beforeAll(async () => {
    stack.transcriber = await startTranscriptionServer();
    stack.customer = await startCustomerServer();
    stack.service = await startService(kind, options(stack.transcriber.url));
  });
  afterAll(async () => {
    await stack.service?.close();
    await stack.customer?.close();
    await stack.transcriber?.close();
  });
  return stack;
}

describeEachStore('speech recognised by the service', (kind: StoreKind) => {
  const stack = speechStack(kind, (url) => ({
    env: {
      SPEECH_TO_TEXT_URL: url,
      SPEECH_TO_TEXT_KEY: 'stt-secret-key-1234',
      SPEECH_TO_TEXT_MODEL: 'whisper-large-v3',
      SPEECH_CONCURRENCY: '1',
    },
    sessions: { recognitionTimeoutMs: 400 },
  }));

  const open = async (setting = 'service', hello: Record<string, unknown> = { browser_recognition: false }) => {
    const { api, deploymentId, secret } = await deploy(
      stack.service,
      { hook_url: stack.customer.hookUrl },
      { runtime_config: { speech_recognition: setting } },
    );
    const widget = await Widget.open(stack.service, deploymentId);
    widget.send({ type: 'hello', token: await mintToken(secret, deploymentId), ...hello });
    const ready = await widget.next('ready');
    return { widget, ready, api };
  };
  const speak = (widget: Widget, clientTurnId: string, ms: number, start: Record<string, unknown> = {}) => {
    widget.send({ type: 'audio_start', client_turn_id: clientTurnId, sample_rate: 16000, ...start });
    for (const frame of audio(ms)) widget.ws.send(frame);
    widget.send({ type: 'audio_end', client_turn_id: clientTurnId });
  };

  it('makes a voice turn of an utterance: transcribing, then turn_accepted with the recognised text, the hook called, the recognition in history; the WAV checked by the recogniser', async () => {
    const { widget, ready, api } = await open();
    expect(ready.speech).toEqual({ recognition: 'service', synthesis: 'browser', mode: 'hands_free' });
    const before = stack.transcriber.uploads.length;
    speak(widget, 'v1', 1_000, { language: 'de-DE' });
    expect(await widget.next('transcribing')).toEqual({ type: 'transcribing', client_turn_id: 'v1' });
    const accepted = await widget.next('turn_accepted');
    expect(accepted).toMatchObject({ client_turn_id: 'v1', text: '1000 ms in de', mode: 'voice', language: 'de-DE' });

    const upload = stack.transcriber.uploads[before]!;
    expect(upload.wav).toEqual({
      sampleRate: 16000,
      channels: 1,
      bitsPerSample: 16,
      dataBytes: 32_000,
      declaredBytes: 32_000,
    });
    expect(upload.fields).toEqual({ model: 'whisper-large-v3', language: 'de', response_format: 'json' });
    expect(upload.authorization).toBe('Bearer stt-secret-key-1234');
    const hook = await waitFor(async () => stack.customer.calls.find((c) => c.body.turn_id === accepted.turn_id));
    expect(hook.body).toMatchObject({ text: '1000 ms in de', mode: 'voice', language: 'de-DE' });

    // The same utterance again (a widget that lost the confirmation) makes no second turn.
    speak(widget, 'v1', 1_000, { language: 'de-DE' });
    await widget.next('transcribing');
    widget.send({ type: 'ping' });
    await widget.next('pong');
    const detail = (await api.get(`/api/v1/conversations/${ready.conversation_id}`)).body.data;
    expect(detail.turns).toHaveLength(1);
    expect(detail.turns[0].recognition).toEqual({
      engine: 'openai-compatible',
      duration_ms: expect.any(Number),
      audio_ms: 1000,
    });
    const hour = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    const analytics = await api.get(
      `/api/v1/analytics?from=${hour.toISOString()}&to=${new Date(hour.getTime() + 3_600_000).toISOString()}&interval=hour&deployment_id=${detail.deployment_id}`,
    );
    expect(analytics.body.data.totals.recognition_ms).toEqual({
      p50: expect.any(Number),
      p95: expect.any(Number),
      count: 1,
    });
    expect(analytics.body.data.totals.turns).toBe(1);
    expect(widget.frames.filter((f) => f.type === 'turn_accepted')).toHaveLength(1);
    // Audio, what was heard and the recogniser's key stay out of the logs.
    expect(stack.service.logs.join('')).not.toMatch(/stt-secret-key|1000 ms in de/);
    widget.close();
  });

  it("has no voice sample without a synthesiser, and says which setting gives one; choosing the service's voice warns", async () => {
    const { api } = await open();
    const agents = await api.get('/api/v1/agents');
    const refused = await api.post(`/api/v1/agents/${agents.body.data[0].id}/voice-sample`, {});
    expectError(refused, 409, 'invalid_state');
    expect(refused.body.error.message).toMatch(/TEXT_TO_SPEECH=espeak-ng or TEXT_TO_SPEECH_URL/);
    const deployments = await api.get('/api/v1/deployments');
    const dep = deployments.body.data[0];
    const saved = await api.put(`/api/v1/deployments/${dep.id}`, {
      runtime_config: { ...dep.runtime_config, speech_synthesis: 'service' },
    });
    expect(saved.body.meta.warnings).toContainEqual({
      path: 'runtime_config.speech_synthesis',
      message: expect.stringMatching(/^this service has no voice of its own/),
    });
  });

  it('says where speech is recognised in ready.speech, and refuses audio_start elsewhere with speech_unavailable, ignoring its frames', async () => {
    const sites: [string, Record<string, unknown>, string, Record<string, unknown>][] = [
      ['auto', {}, 'browser', { fallback: 'service' }],
      ['auto', { browser_recognition: true }, 'browser', { fallback: 'service' }],
      ['auto', { browser_recognition: false }, 'service', {}],
      ['browser', { browser_recognition: false }, 'none', {}],
      ['browser', { browser_recognition: true }, 'browser', {}],
      ['service', { browser_recognition: true }, 'service', {}],
      ['off', { browser_recognition: false }, 'none', { text_only: true }],
    ];
    for (const [setting, hello, site, more] of sites) {
      const { widget, ready } = await open(setting, hello);
      expect([setting, hello, ready.speech]).toEqual([
        setting,
        hello,
        { recognition: site, ...more, synthesis: 'browser', mode: site === 'service' ? 'hands_free' : 'push_to_talk' },
      ]);
      widget.close();
    }
    const { widget } = await open('off');
    speak(widget, 'x1', 500);
    expect(await nextFrame(widget)).toEqual({
      type: 'error',
      code: 'speech_unavailable',
      message: 'Speech is not recognised by the service for this widget; please type instead',
    });
    // Its frames and its end are answered with nothing; the socket goes on.
    widget.send({ type: 'ping' });
    expect(await nextFrame(widget)).toEqual({ type: 'pong' });
    widget.close();
  });

  it("falls back to the service's recognition under auto when the browser's cannot work here (Chromium without its maker's speech service): recognition_fallback, then the next utterance is heard", async () => {
    const { widget, ready } = await open('auto', { browser_recognition: true });
    expect(ready.speech).toMatchObject({ recognition: 'browser', fallback: 'service' });
    speak(widget, 'b1', 500);
    expect(await nextFrame(widget)).toMatchObject({ type: 'error', code: 'speech_unavailable' });
    widget.send({ type: 'recognition_fallback' });
    speak(widget, 'b2', 1_000);
    expect(await widget.next('transcribing')).toEqual({ type: 'transcribing', client_turn_id: 'b2' });
    expect(await widget.next('turn_accepted')).toMatchObject({
      client_turn_id: 'b2',
      text: '1000 ms in en',
      mode: 'voice',
    });
    widget.close();

    // Where the deployment chose the browser's, or the browser already uses the service's, there is nothing to fall back to.
    for (const [setting, hello] of [
      ['browser', { browser_recognition: true }],
      ['auto', { browser_recognition: false }],
    ] as const) {
      const other = await open(setting, hello);
      other.widget.send({ type: 'recognition_fallback' });
      expect(await nextFrame(other.widget)).toEqual({
        type: 'error',
        code: 'invalid_message',
        message: "This widget's speech has no fallback: ready.speech.fallback names none",
      });
      other.widget.close();
    }
  });

  it('answers every limit with its error and keeps the socket: one utterance at a time, 30 s, unknown ends, cancels', async () => {
    const { widget } = await open();
    widget.send({ type: 'audio_start', client_turn_id: 'a1', sample_rate: 16000 });
    widget.send({ type: 'audio_start', client_turn_id: 'a2', sample_rate: 16000 });
    expect(await nextFrame(widget)).toMatchObject({
      type: 'error',
      code: 'invalid_message',
      message: 'Utterance a1 is still in progress: end or cancel it first',
    });
    for (const frame of audio(300)) widget.ws.send(frame);
    widget.send({ type: 'audio_end', client_turn_id: 'a1' });
    expect(await nextFrame(widget)).toEqual({ type: 'transcribing', client_turn_id: 'a1' });
    expect(await widget.next('turn_accepted')).toMatchObject({ client_turn_id: 'a1', text: '300 ms in en' });
    // The hook's 202 comes back on its own time: its frame is waited for, so the frames below are the limits' own.
    await widget.next('turn_acknowledged');

    // Past 30 s: speech_too_long at the frame that crosses it, later frames and the end ignored.
    widget.send({ type: 'audio_start', client_turn_id: 'long', sample_rate: 16000 });
    const frames = audio(31_000, 16_384);
    const crossing = frames.findIndex((_f, i) => (i + 1) * 16_384 > 960_000);
    for (const frame of frames.slice(0, crossing)) widget.ws.send(frame);
    widget.send({ type: 'ping' });
    expect(await nextFrame(widget)).toEqual({ type: 'pong' });
    widget.ws.send(frames[crossing]!);
    expect(await nextFrame(widget)).toEqual({
      type: 'error',
      code: 'speech_too_long',
      message: 'An utterance may be at most 30 seconds long; this one was dropped',
    });
    for (const frame of frames.slice(crossing + 1)) widget.ws.send(frame);
    widget.send({ type: 'audio_end', client_turn_id: 'long' });
    widget.send({ type: 'ping' });
    expect(await nextFrame(widget)).toEqual({ type: 'pong' });

    // An end of no utterance; a cancel answered with nothing, after which its end is unknown.
    widget.send({ type: 'audio_end', client_turn_id: 'nothing' });
    expect(await nextFrame(widget)).toMatchObject({
      type: 'error',
      code: 'invalid_message',
      message: 'No utterance nothing is in progress',
    });
    widget.send({ type: 'audio_start', client_turn_id: 'c1', sample_rate: 16000 });
    for (const frame of audio(200)) widget.ws.send(frame);
    widget.send({ type: 'audio_cancel', client_turn_id: 'c1' });
    widget.send({ type: 'audio_end', client_turn_id: 'c1' });
    expect(await nextFrame(widget)).toMatchObject({
      type: 'error',
      code: 'invalid_message',
      message: 'No utterance c1 is in progress',
    });
    // Another sample rate is not the protocol's.
    widget.send({ type: 'audio_start', client_turn_id: 'r1', sample_rate: 44100 });
    expect(await nextFrame(widget)).toMatchObject({ type: 'error', code: 'invalid_message' });
    widget.close();
  });

  it('closes with 4400 on audio outside an utterance, and with 1009 on a frame over 16 KiB', async () => {
    const stray = (await open()).widget;
    stray.ws.send(Buffer.alloc(320));
    expect((await stray.closed).code).toBe(4400);
    const big = (await open()).widget;
    big.send({ type: 'audio_start', client_turn_id: 'b1', sample_rate: 16000 });
    big.ws.send(Buffer.alloc(16 * 1024 + 2));
    expect((await big.closed).code).toBe(1009);
  });

  it('tells speech_unrecognized, speech_unavailable (an error, a timeout) and speech_busy, and makes no turn of them', async () => {
    const { widget } = await open();
    const said = (code: string) => widget.next('error').then((f) => expect(f.code).toBe(code));
    stack.transcriber.state.behaviour = (_u, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"  "}');
    speak(widget, 'e1', 300);
    await said('speech_unrecognized');
    stack.transcriber.state.behaviour = (_u, res) => res.writeHead(500).end('{"error":"model not loaded"}');
    speak(widget, 'e2', 300);
    await said('speech_unavailable');
    stack.transcriber.state.behaviour = () => {};
    speak(widget, 'e3', 300);
    await said('speech_unavailable');

    // One recognition at a time here (SPEECH_CONCURRENCY=1): a second visitor meanwhile is busy.
    let answer: (() => void) | undefined;
    stack.transcriber.state.behaviour = (_u, res) =>
      (answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"late"}'));
    const other = (await open()).widget;
    speak(widget, 'e4', 300);
    await waitFor(async () => answer !== undefined);
    speak(other, 'o1', 300);
    expect(await other.next('error')).toMatchObject({ code: 'speech_busy' });
    await said('speech_unavailable');
    expect(widget.frames.filter((f) => f.type === 'turn_accepted')).toEqual([]);
    widget.close();
    other.close();
    stack.transcriber.state.behaviour = hearsLength;
  });

  it('cuts off the recognition of a socket that closes mid-utterance, and makes no turn', async () => {
    stack.transcriber.state.behaviour = () => {};
    const abortedBefore = stack.transcriber.state.aborted;
    const uploadsBefore = stack.transcriber.uploads.length;
    const { widget, ready, api } = await open();
    speak(widget, 'gone', 300);
    await widget.next('transcribing');
    // This utterance is at the recogniser, which holds it unanswered.
    await waitFor(
      async () =>
        stack.transcriber.uploads.length > uploadsBefore && stack.transcriber.uploads.at(-1)!.wav.dataBytes === 9_600,
    );
    widget.close();
    await waitFor(async () => stack.transcriber.state.aborted > abortedBefore, 2_000, 'the upload cut off');
    stack.transcriber.state.behaviour = hearsLength;
    // Longer than the recogniser's timeout here: a recognition that went on would have made its turn by now.
    await new Promise((r) => setTimeout(r, 600));
    expect((await api.get(`/api/v1/conversations/${ready.conversation_id}`)).body.data.turns).toEqual([]);
  });
});

describe('speech budgets', () => {
  const stack = speechStack('sqlite', (url) => ({
    env: { SPEECH_TO_TEXT_URL: url, SPEECH_CONCURRENCY: '2' },
    speech: {
      utterancesPerMinute: { conversation: 3, visitor: 4, deployment: 100 },
      audioSecondsPerMinute: { conversation: 2, visitor: 100, deployment: 1_000 },
      maxAudioBytes: 96_000,
      utteranceIdleMs: 300,
    },
  }));
  const deployment = () =>
    deploy(stack.service, { hook_url: stack.customer.hookUrl }, { runtime_config: { speech_recognition: 'service' } });
  const visitor = async (dep: { deploymentId: string; secret: string }, sub = 'guest-1') => {
    const widget = await Widget.open(stack.service, dep.deploymentId);
    widget.send({
      type: 'hello',
      token: await mintToken(dep.secret, dep.deploymentId, { sub }),
      browser_recognition: false,
    });
    await widget.next('ready');
    return widget;
  };
  const start = (widget: Widget, id: string) =>
    widget.send({ type: 'audio_start', client_turn_id: id, sample_rate: 16000 });
  const refusal = async (widget: Widget) => {
    const frame = await nextFrame(widget);
    expect(frame).toMatchObject({ type: 'error' });
    return `${frame.code}: ${frame.message}`;
  };
  const holdAnswers = () => {
    const waiting: (() => void)[] = [];
    stack.transcriber.state.behaviour = (_u, res) =>
      waiting.push(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{"text":"held"}'));
    return () => {
      for (const answer of waiting.splice(0)) answer();
      stack.transcriber.state.behaviour = hearsLength;
    };
  };

  it('takes one recognition at a time per socket', async () => {
    const release = holdAnswers();
    const uploads = stack.transcriber.uploads.length;
    const widget = await visitor(await deployment());
    start(widget, 'u1');
    for (const frame of audio(300)) widget.ws.send(frame);
    widget.send({ type: 'audio_end', client_turn_id: 'u1' });
    await widget.next('transcribing');
    await waitFor(async () => stack.transcriber.uploads.length > uploads);
    start(widget, 'u2');
    expect(await refusal(widget)).toBe(
      'speech_busy: Your last words are still being recognised; speak again once they are',
    );
    release();
    expect(await widget.next('turn_accepted')).toMatchObject({ client_turn_id: 'u1', text: 'held' });
    widget.close();
  });

  it('counts utterances per conversation and visitor, cancelled ones too, and audio seconds per conversation, each refused at audio_start', async () => {
    const dep = await deployment();
    const first = await visitor(dep);
    for (const id of ['c1', 'c2', 'c3']) {
      start(first, id);
      first.ws.send(audio(100)[0]!);
      first.send({ type: 'audio_cancel', client_turn_id: id });
    }
    start(first, 'c4');
    expect(await refusal(first)).toMatch(
      /^speech_busy: This conversation has spoken a lot in the last minute; try again in \d+ s, or type$/,
    );
    // Its frames and end are ignored, as for any refused utterance.
    first.ws.send(audio(100)[0]!);
    first.send({ type: 'audio_end', client_turn_id: 'c4' });
    first.send({ type: 'ping' });
    expect(await nextFrame(first)).toEqual({ type: 'pong' });
    // The same visitor in a second conversation has one utterance left of four.
    const second = await visitor(dep);
    start(second, 'd1');
    second.send({ type: 'audio_cancel', client_turn_id: 'd1' });
    start(second, 'd2');
    expect(await refusal(second)).toMatch(/^speech_busy: You have spoken a lot in the last minute/);
    // Another visitor has a budget of their own, and 2 s of audio a minute in a conversation.
    const other = await visitor(dep, 'guest-2');
    start(other, 'e1');
    for (const frame of audio(2_100)) other.ws.send(frame);
    other.send({ type: 'audio_end', client_turn_id: 'e1' });
    await other.next('turn_accepted');
    start(other, 'e2');
    expect(await refusal(other)).toMatch(/^speech_busy: This conversation has spoken a lot/);
    for (const w of [first, second, other]) w.close();
  });

  it("gives one deployment at most half of SPEECH_CONCURRENCY: another customer's visitor still gets a place", async () => {
    const release = holdAnswers();
    const uploads = stack.transcriber.uploads.length;
    const busy = await deployment();
    const [a, b] = [await visitor(busy, 'a'), await visitor(busy, 'b')];
    const speakShort = (widget: Widget, id: string) => {
      start(widget, id);
      for (const frame of audio(200)) widget.ws.send(frame);
      widget.send({ type: 'audio_end', client_turn_id: id });
    };
    speakShort(a, 'a1');
    await waitFor(async () => stack.transcriber.uploads.length > uploads);
    speakShort(b, 'b1');
    await b.next('transcribing');
    expect(await b.next('error')).toMatchObject({
      code: 'speech_busy',
      message: 'Too many visitors are speaking right now; try again in a moment, or type',
    });
    const elsewhere = await visitor(await deployment());
    speakShort(elsewhere, 'x1');
    await waitFor(
      async () => stack.transcriber.uploads.length > uploads + 1,
      2_000,
      "the other customer's utterance at the recogniser",
    );
    release();
    expect(await elsewhere.next('turn_accepted')).toMatchObject({ client_turn_id: 'x1' });
    expect(await a.next('turn_accepted')).toMatchObject({ client_turn_id: 'a1' });
    for (const w of [a, b, elsewhere]) w.close();
  });

  it('holds at most maxAudioBytes of utterances in progress in the process, and drops an utterance that stops sending audio', async () => {
    const dep = await deployment();
    const [a, b] = [await visitor(dep, 'a'), await visitor(dep, 'b')];
    start(a, 'a1');
    for (const frame of audio(2_000)) a.ws.send(frame);
    a.send({ type: 'ping' });
    await a.next('pong');
    // 64,000 bytes held of 96,000: the frame that would pass it drops b's utterance.
    start(b, 'b1');
    for (const frame of audio(1_500)) b.ws.send(frame);
    expect(await refusal(b)).toBe(
      'speech_busy: Too many visitors are speaking right now; this utterance was dropped: try again in a moment, or type',
    );
    b.send({ type: 'audio_end', client_turn_id: 'b1' });
    // a goes quiet: after 0.3 s its audio is freed, and b may speak again.
    expect(await refusal(a)).toBe('speech_unavailable: No audio came for 0.3 s; this utterance was dropped');
    a.send({ type: 'audio_end', client_turn_id: 'a1' });
    start(b, 'b2');
    for (const frame of audio(1_500)) b.ws.send(frame);
    b.send({ type: 'audio_end', client_turn_id: 'b2' });
    expect(await b.next('turn_accepted')).toMatchObject({ client_turn_id: 'b2', text: '1500 ms in en' });
    a.send({ type: 'ping' });
    expect(await nextFrame(a)).toEqual({ type: 'pong' });
    for (const w of [a, b]) w.close();
  });
});

describe('the speech configuration', () => {
  it('takes one recogniser per process, and says so when given two', () => {
    expect(loadConfig({ SPEECH_TO_TEXT_URL: 'http://stt.example/v1/audio/transcriptions' }).speechToText).toEqual({
      engine: 'openai-compatible',
      url: 'http://stt.example/v1/audio/transcriptions',
      model: 'whisper-1',
      key: undefined,
    });
    expect(loadConfig({ SPEECH_TO_TEXT: 'pocketsphinx' }).speechToText).toEqual({ engine: 'pocketsphinx' });
    expect(loadConfig({}).speechToText).toBeUndefined();
    expect(() => loadConfig({ SPEECH_TO_TEXT: 'pocketsphinx', SPEECH_TO_TEXT_URL: 'http://stt.example/' })).toThrow(
      'SPEECH_TO_TEXT_URL and SPEECH_TO_TEXT=pocketsphinx name two recognisers: set one',
    );
    expect(() => loadConfig({ SPEECH_TO_TEXT: 'vosk' })).toThrow(/SPEECH_TO_TEXT/);
  });
});

describe.skipIf(!installed('pocketsphinx_continuous') || !installed('espeak-ng'))(
  'PocketSphinx on this machine',
  () => {
    let service: TestService;
    let customer: Awaited<ReturnType<typeof startCustomerServer>>;
    let dir: string;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'concierge-speech-'));
      customer = await startCustomerServer();
      service = await startService('sqlite', { env: { SPEECH_TO_TEXT: 'pocketsphinx' } });
    });
    afterAll(async () => {
      await service?.close();
      await customer?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('recognises English that espeak-ng spoke into a turn, and refuses another language', async () => {
      const { api, deploymentId, secret } = await deploy(
        service,
        { hook_url: customer.hookUrl },
        { runtime_config: { speech_recognition: 'service' } },
      );
      const widget = await Widget.open(service, deploymentId);
      const ready = await widget.hello(await mintToken(secret, deploymentId));
      expect(ready.speech).toEqual({ recognition: 'service', synthesis: 'browser', mode: 'hands_free' });
      const pcm = spoken('what time is breakfast', dir);
      widget.send({ type: 'audio_start', client_turn_id: 'p1', sample_rate: 16000 });
      for (let at = 0; at < pcm.length; at += 8_000) widget.ws.send(pcm.subarray(at, at + 8_000));
      widget.send({ type: 'audio_end', client_turn_id: 'p1' });
      await widget.next('transcribing');
      // PocketSphinx is weak on synthetic speech: some English words, not necessarily these.
      const accepted = await widget.next('turn_accepted', 15_000);
      expect(accepted).toMatchObject({ client_turn_id: 'p1', mode: 'voice' });
      expect(accepted.text).toMatch(/^[a-z' ]+$/);
      const detail = (await api.get(`/api/v1/conversations/${ready.conversation_id}`)).body.data;
      expect(detail.turns[0].recognition).toEqual({
        engine: 'pocketsphinx',
        duration_ms: expect.any(Number),
        audio_ms: Math.round(pcm.length / 32),
      });

      widget.send({ type: 'audio_start', client_turn_id: 'p2', sample_rate: 16000, language: 'de-DE' });
      widget.ws.send(pcm.subarray(0, 8_000));
      widget.send({ type: 'audio_end', client_turn_id: 'p2' });
      expect(await widget.next('error')).toEqual({
        type: 'error',
        code: 'speech_unavailable',
        message: 'Speech in de-DE cannot be recognised here; please type instead',
      });
      widget.close();
    }, 30_000);
  },
);

describe('a recogniser the egress guard refuses', () => {
  it('does not stop the service: each utterance is speech_unavailable, and the log says why once', async () => {
    const customer = await startCustomerServer();
    const service = await startService('sqlite', {
      env: { SPEECH_TO_TEXT_URL: 'http://10.255.255.1/v1/audio/transcriptions' },
    });
    try {
      const { deploymentId, secret } = await deploy(
        service,
        { hook_url: customer.hookUrl },
        { runtime_config: { speech_recognition: 'service' } },
      );
      const widget = await Widget.open(service, deploymentId);
      await widget.hello(await mintToken(secret, deploymentId));
      for (const id of ['s1', 's2']) {
        widget.send({ type: 'audio_start', client_turn_id: id, sample_rate: 16000 });
        for (const frame of audio(200)) widget.ws.send(frame);
        widget.send({ type: 'audio_end', client_turn_id: id });
        expect(await widget.next('error')).toMatchObject({ code: 'speech_unavailable' });
      }
      const said = service.logs.filter((line) => line.includes('speech recognition failed'));
      expect(said).toHaveLength(1);
      expect(JSON.parse(said[0]!)).toMatchObject({
        level: 40,
        engine: 'openai-compatible',
        reason:
          "10.255.255.1 is not a public address; the service calls only public addresses unless its operator allows this one in HOOK_ALLOWED_HOSTS: speech@10.255.255.1:80 (every customer's speech servers)",
      });
      widget.close();
    } finally {
      await service.close();
      await customer.close();
    }
  });
});
