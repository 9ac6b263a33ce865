import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploy, mintToken, postReply, startCustomerServer, Widget } from '../../../test/concierge-kit.js';
import {
  describeEachStore,
  expectError,
  startService,
  type StoreKind,
  type TestService,
  waitFor,
} from '../../../test/harness.js';
import { installed } from '../../../test/service-process.js';
import { SENTENCE_AUDIO_S } from './speech-synthesis.js';
import { pcmOf, SPEECH_SAMPLE_RATE, speaks, startSpeechServer } from '../../../test/speech-server.js';
import { espeakNg } from './espeak-ng.js';
import { rmsOf } from '../../../test/audio.js';

type SpeechServer = Awaited<ReturnType<typeof startSpeechServer>>;

/** The speech frames of `turnId` (or every one), in the order they came, PCM included. */
const spoken = (widget: Widget, turnId?: string) => {
  const out: any[] = [];
  let mine = false;
  for (const frame of widget.frames) {
    if (frame.type === 'speech' || frame.type === 'speech_unavailable') mine = !turnId || frame.turn_id === turnId;
    if (mine && (frame.type.startsWith('speech') || frame.type === 'pcm')) out.push(frame);
    if (frame.type === 'speech_end' || frame.type === 'speech_unavailable') mine = false;
  }
  return out;
};

/** Each sentence said: its text, and the PCM bytes that came for it. */
const sentencesSaid = (frames: any[]) =>
  frames
    .filter((f) => f.type === 'speech')
    .map((head) => {
      const from = frames.indexOf(head);
      const end = frames.findIndex((f, i) => i > from && f.type !== 'pcm');
      const pcm = frames.slice(from + 1, end < 0 ? undefined : end).map((f) => f.pcm as Buffer);
      return { sentence: head.sentence, text: head.text, pcm: Buffer.concat(pcm), frames: pcm };
    });

/** Root mean square of 16-bit samples, in sample units: 0 is silence. */
const rms = (pcm: Buffer) => rmsOf(pcm) * 32_768;

describeEachStore("the agent's own voice", (kind: StoreKind) => {
  let service: TestService;
  let speech: SpeechServer;
  let customer: Awaited<ReturnType<typeof startCustomerServer>>;

  beforeAll(async () => {
    speech = await startSpeechServer();
    customer = await startCustomerServer();
    service = await startService(kind, {
      env: {
        TEXT_TO_SPEECH_URL: speech.url,
        TEXT_TO_SPEECH_KEY: 'tts-secret-key-5678',
        TEXT_TO_SPEECH_MODEL: 'kokoro',
      },
      sessions: { synthesisTimeoutMs: 600 },
    });
  });
  afterAll(async () => {
    await service?.close();
    await customer?.close();
    await speech?.close();
  });

  const open = async (runtime: Record<string, unknown> = {}) => {
    const deployed = await deploy(service, { hook_url: customer.hookUrl }, { runtime_config: runtime });
    const widget = await Widget.open(service, deployed.deploymentId);
    const ready = await widget.hello(await mintToken(deployed.secret, deployed.deploymentId));
    return { ...deployed, widget, ready, conversationId: ready.conversation_id as string };
  };
  const ask = async (
    widget: Widget,
    id: string,
    mode: 'voice' | 'text' = 'voice',
    text = 'Hello?',
    language?: string,
  ) => {
    widget.send({ type: 'user_turn', client_turn_id: id, text, mode, ...(language ? { language } : {}) });
    const accepted = await widget.next('turn_accepted');
    await widget.next('turn_acknowledged');
    return accepted.turn_id as string;
  };
  const reply = async (
    d: { deploymentId: string; secret: string; conversationId: string },
    turnId: string,
    body: object,
  ) =>
    expect(
      (
        await postReply(
          service,
          d.deploymentId,
          { conversation_id: d.conversationId, turn_id: turnId, ...body },
          d.secret,
        )
      ).status,
    ).toBe(202);
  const endsOf = (widget: Widget, turnId: string) =>
    widget.frames.filter((f) => (f.type === 'speech_end' || f.type === 'speech_unavailable') && f.turn_id === turnId);

  it("speaks a voice turn's reply sentence by sentence: speech, PCM in whole samples of at most 16 KiB, speech_end; a typed turn's reply is not spoken", async () => {
    const d = await open();
    expect(d.ready.speech.synthesis).toBe('service');
    const turnId = await ask(d.widget, 'v1');
    const calls = speech.calls.length;
    await reply(d, turnId, { reply_text: 'Welcome to the Adlon. Breakfast is from seven!' });
    await waitFor(async () => endsOf(d.widget, turnId).length === 2, 5_000, 'two sentences said');
    const frames = spoken(d.widget, turnId);
    const said = sentencesSaid(frames);
    expect(frames.map((f) => f.type).filter((t) => t !== 'pcm')).toEqual([
      'speech',
      'speech_end',
      'speech',
      'speech_end',
    ]);
    expect(frames[0]).toEqual({
      type: 'speech',
      turn_id: turnId,
      sentence: 0,
      text: 'Welcome to the Adlon.',
      sample_rate: SPEECH_SAMPLE_RATE,
    });
    expect(said.map((s) => [s.sentence, s.text])).toEqual([
      [0, 'Welcome to the Adlon.'],
      [1, 'Breakfast is from seven!'],
    ]);
    // Every byte the synthesiser streamed, in whole samples, frames of at most 16 KiB.
    for (const s of said) {
      expect(s.pcm.equals(pcmOf(s.text))).toBe(true);
      expect(s.frames.every((f) => f.length <= 16 * 1024 && f.length % 2 === 0)).toBe(true);
    }
    expect(speech.calls.slice(calls).map((c) => [c.authorization, c.contentType, c.body])).toEqual([
      [
        'Bearer tts-secret-key-5678',
        'application/json',
        { model: 'kokoro', input: 'Welcome to the Adlon.', voice: 'alloy', speed: 1, response_format: 'pcm' },
      ],
      [
        'Bearer tts-secret-key-5678',
        'application/json',
        { model: 'kokoro', input: 'Breakfast is from seven!', voice: 'alloy', speed: 1, response_format: 'pcm' },
      ],
    ]);

    const typed = await ask(d.widget, 't1', 'text');
    await reply(d, typed, { reply_text: 'Typed answers are read, not heard.' });
    await d.widget.next('reply');
    await new Promise((r) => setTimeout(r, 300));
    expect(spoken(d.widget, typed)).toEqual([]);
    expect(speech.calls.slice(calls)).toHaveLength(2);
  });

  it('says a streamed reply sentence by sentence as its parts arrive, and only to the socket that asked by voice', async () => {
    const d = await open();
    const other = await Widget.open(service, d.deploymentId);
    await other.hello(await mintToken(d.secret, d.deploymentId), { conversation_id: d.conversationId });
    const turnId = await ask(d.widget, 'v1');
    await reply(d, turnId, { part: 0, text: 'Good morning. We have' });
    // The first sentence is said before the rest of the reply exists.
    await waitFor(async () => endsOf(d.widget, turnId).length === 1, 5_000, 'the first sentence');
    expect(sentencesSaid(spoken(d.widget, turnId)).map((s) => s.text)).toEqual(['Good morning.']);
    await reply(d, turnId, { part: 1, text: ' two rooms left' });
    await reply(d, turnId, { reply_text: 'Good morning. We have two rooms left' });
    await waitFor(async () => endsOf(d.widget, turnId).length === 2, 5_000, 'the rest');
    expect(sentencesSaid(spoken(d.widget, turnId)).map((s) => s.text)).toEqual([
      'Good morning.',
      'We have two rooms left',
    ]);
    await other.next('reply');
    expect(spoken(other)).toEqual([]);
    other.close();
  });

  it('synthesises the same voice, speed and text once per process', async () => {
    const d = await open();
    const text = `Kept ${crypto.randomUUID().slice(0, 8)}.`;
    for (const id of ['v1', 'v2']) {
      const turnId = await ask(d.widget, id);
      await reply(d, turnId, { reply_text: text });
      await waitFor(async () => endsOf(d.widget, turnId).length === 1, 5_000, 'said');
      expect(sentencesSaid(spoken(d.widget, turnId))[0]!.pcm.equals(pcmOf(text))).toBe(true);
    }
    expect(speech.calls.filter((c) => c.body.input === text)).toHaveLength(1);
  });

  it('tells speech_unavailable for a sentence the synthesiser fails, answers with a page, or does not finish in time, and says the next', async () => {
    const d = await open();
    speech.state.behaviour = (call, res) => {
      const input = String(call.body.input);
      if (input.startsWith('Broken')) return void res.writeHead(500, { 'content-type': 'application/json' }).end('{}');
      if (input.startsWith('Login')) return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html>');
      if (input.startsWith('Slow'))
        return void res.writeHead(200, { 'content-type': 'audio/pcm' }).write(Buffer.alloc(0));
      speaks(call, res, undefined as never);
    };
    try {
      const turnId = await ask(d.widget, 'v1');
      await reply(d, turnId, { reply_text: 'Broken one. Login two. Slow three. Fine four.' });
      await waitFor(async () => endsOf(d.widget, turnId).length === 4, 5_000, 'four sentences');
      expect(endsOf(d.widget, turnId).map((f) => [f.type, f.sentence])).toEqual([
        ['speech_unavailable', 0],
        ['speech_unavailable', 1],
        ['speech_unavailable', 2],
        ['speech_end', 3],
      ]);
      expect(
        spoken(d.widget, turnId)
          .filter((f) => f.type === 'speech')
          .map((f) => f.text),
      ).toEqual(['Fine four.']);
    } finally {
      speech.state.behaviour = speaks;
    }
  });

  it('cancels the syntheses of a socket that closes', async () => {
    const d = await open();
    let started = 0;
    speech.state.behaviour = (_call, res) => {
      started++;
      res.writeHead(200, { 'content-type': 'audio/pcm' }).write(Buffer.alloc(2));
    };
    const aborted = speech.state.aborted;
    try {
      const turnId = await ask(d.widget, 'v1');
      await reply(d, turnId, { reply_text: 'One that never ends. And another.' });
      await waitFor(async () => started === 2, 5_000, 'two syntheses');
      d.widget.close();
      await waitFor(async () => speech.state.aborted - aborted === 2, 2_000, 'both cut off');
    } finally {
      speech.state.behaviour = speaks;
    }
  });

  it('keeps what the visitor heard: in the conversation detail, and in the next hook body as previous_reply', async () => {
    const d = await open();
    const turnId = await ask(d.widget, 'v1');
    await reply(d, turnId, { reply_text: 'We have a room. It looks over the park and the river.' });
    await waitFor(async () => endsOf(d.widget, turnId).length === 2, 5_000, 'said');
    const second = sentencesSaid(spoken(d.widget, turnId))[1]!;
    const durationMs = (second.pcm.length / 2 / SPEECH_SAMPLE_RATE) * 1000;
    d.widget.send({ type: 'playback', turn_id: turnId, sentence: 0, offset_ms: 900, state: 'finished' });
    // Halfway through "It looks over the park and the river." (38 characters): 19 is inside "park".
    d.widget.send({
      type: 'playback',
      turn_id: turnId,
      sentence: 1,
      offset_ms: Math.round(durationMs / 2),
      state: 'interrupted',
    });
    const next = await ask(d.widget, 'v2', 'voice', 'Is it quiet?');
    const detail = await d.api.get(`/api/v1/conversations/${d.conversationId}`);
    const turn = detail.body.data.turns.find((t: any) => t.id === turnId);
    expect(turn.heard).toEqual({
      text: 'We have a room. It looks over the',
      interrupted: true,
      at: expect.any(String),
    });
    const hook = customer.calls.find((c) => c.body.turn_id === next);
    expect(hook?.body.previous_reply).toEqual({
      turn_id: turnId,
      heard_text: 'We have a room. It looks over the',
      interrupted: true,
    });
  });

  it("applies the agent's service voice, pace, voices by language and pronunciations to what is said, never to what is shown", async () => {
    const d = await open();
    const agentId = (await d.api.get(`/api/v1/deployments/${d.deploymentId}`)).body.data.agent_id;
    const spec = (await d.api.get(`/api/v1/agents/${agentId}`)).body.data.agent_spec;
    expect(
      (
        await d.api.put(`/api/v1/agents/${agentId}`, {
          draft_spec: {
            ...spec,
            voice: { service: { voice: 'bf_emma', speed: 1.25, by_language: { de: 'df_anna' } } },
            pronunciations: [
              { term: 'Adlon', say: 'Ad-lonn' },
              { term: 'Spa', say: 'Schpa', language: 'de' },
            ],
          },
        })
      ).status,
    ).toBe(200);
    expect((await d.api.post(`/api/v1/agents/${agentId}/publish`)).status).toBe(200);
    const widget = await Widget.open(service, d.deploymentId);
    const ready = await widget.hello(await mintToken(d.secret, d.deploymentId));
    expect(ready.agent.pronunciations).toEqual([
      { term: 'Adlon', say: 'Ad-lonn' },
      { term: 'Spa', say: 'Schpa', language: 'de' },
    ]);
    const at = { ...d, conversationId: ready.conversation_id };
    const calls = speech.calls.length;
    const english = await ask(widget, 'v1', 'voice', 'Spa?');
    await reply(at, english, { reply_text: 'The Adlon spa opens at nine.' });
    await waitFor(async () => endsOf(widget, english).length === 1, 5_000, 'said');
    const german = await ask(widget, 'v2', 'voice', 'Und das Spa?', 'de-DE');
    await reply(at, german, { reply_text: 'Das Spa im Adlon öffnet um neun.' });
    await waitFor(async () => endsOf(widget, german).length === 1, 5_000, 'gesagt');
    expect(speech.calls.slice(calls).map((c) => [c.body.voice, c.body.speed, c.body.input])).toEqual([
      ['bf_emma', 1.25, 'The Ad-lonn spa opens at nine.'],
      ['df_anna', 1.25, 'Das Schpa im Ad-lonn öffnet um neun.'],
    ]);
    expect(spoken(widget, german)[0].text).toBe('Das Spa im Adlon öffnet um neun.');
    widget.close();
  });

  it('refuses to publish a voice or pronunciations it could not use, naming each field', async () => {
    const d = await open();
    const agentId = (await d.api.get(`/api/v1/deployments/${d.deploymentId}`)).body.data.agent_id;
    const spec = (await d.api.get(`/api/v1/agents/${agentId}`)).body.data.agent_spec;
    const refusal = async (draft: Record<string, unknown>) => {
      expect((await d.api.put(`/api/v1/agents/${agentId}`, { draft_spec: { ...spec, ...draft } })).status).toBe(200);
      const refused = await d.api.post(`/api/v1/agents/${agentId}/publish`);
      expectError(refused, 400, 'invalid_request');
      return refused.body.error.details;
    };
    expect(
      await refusal({ voice: { service: { voice: 'bf_emma', speed: 3 } }, pronunciations: [{ term: ' ', say: 'x' }] }),
    ).toEqual([
      { path: 'draft_spec.voice.service.speed', message: 'must be from 0.5 to 2' },
      { path: 'draft_spec.pronunciations.0.term', message: 'must not be empty' },
    ]);
    expect(
      await refusal({ pronunciations: Array.from({ length: 201 }, (_, i) => ({ term: `t${i}`, say: 's' })) }),
    ).toEqual([{ path: 'draft_spec.pronunciations', message: 'must have at most 200 entries' }]);
    expect((await d.api.get(`/api/v1/agents/${agentId}`)).body.data.agent_spec).toEqual(spec);
  });

  it("lets the customer hear the agent's voice: a WAV of its greeting, or of a voice being tried; another customer's agent is not found", async () => {
    const d = await open();
    const agentId = (await d.api.get(`/api/v1/deployments/${d.deploymentId}`)).body.data.agent_id;
    const sample = await fetch(`${service.url}/api/v1/agents/${agentId}/voice-sample`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.apiKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect([sample.status, sample.headers.get('content-type')]).toEqual([200, 'audio/wav']);
    const wav = Buffer.from(await sample.arrayBuffer());
    const greeting = 'Hello, this is the front desk. How can I help you today?';
    expect([wav.subarray(0, 4).toString(), wav.readUInt32LE(24), wav.readUInt16LE(34)]).toEqual(['RIFF', 24_000, 16]);
    expect(wav.subarray(44).equals(pcmOf(greeting))).toBe(true);
    const calls = speech.calls.length;
    const tried = await d.api.post(`/api/v1/agents/${agentId}/voice-sample`, {
      text: 'Welcome.',
      language: 'de-DE',
      voice: { voice: 'am_adam', speed: 0.8, by_language: { de: 'df_anna' } },
    });
    expect(tried.status).toBe(200);
    expect(speech.calls.slice(calls).map((c) => [c.body.voice, c.body.speed, c.body.input])).toEqual([
      ['df_anna', 0.8, 'Welcome.'],
    ]);
    const other = await deploy(service, { hook_url: customer.hookUrl });
    expectError(await other.api.post(`/api/v1/agents/${agentId}/voice-sample`, {}), 404, 'not_found');
    expectError(
      await d.api.post(`/api/v1/agents/${agentId}/voice-sample`, { voice: { voice: 'x', speed: 9 } }),
      400,
      'invalid_request',
    );
  });

  it('says at most 1,000 characters of a sentence, pronunciations applied, and at most 90 s of its audio (one request built 130 MB)', async () => {
    const d = await open();
    const agentId = (await d.api.get(`/api/v1/deployments/${d.deploymentId}`)).body.data.agent_id;
    const calls = speech.calls.length;
    const letters = 'abcdefghijklmnopqrstuvwxyz'.split('');
    const sample = await fetch(`${service.url}/api/v1/agents/${agentId}/voice-sample`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        text: letters.join(' ').repeat(5).slice(0, 300),
        voice: { voice: 'am_adam', speed: 0.5 },
        pronunciations: letters.map((term) => ({ term, say: 'z'.repeat(200) })),
      }),
    });
    expect(sample.status).toBe(200);
    const wav = Buffer.from(await sample.arrayBuffer());
    expect(String(speech.calls[calls]!.body.input).length).toBe(1_000);
    // 1,000 characters are 20 s of the scripted server's audio: within the 90 s a sentence may have.
    expect(wav.length - 44).toBe(pcmOf('x'.repeat(1_000)).length);
    expect(SENTENCE_AUDIO_S * 24_000 * 2).toBeGreaterThan(wav.length);

    // An engine that never stops: cut at 90 s, the connection to it closed.
    speech.state.behaviour = (_call, res) => {
      res.writeHead(200, { 'content-type': 'audio/pcm' });
      const more = () => !res.destroyed && res.write(Buffer.alloc(48_000, 1), () => setImmediate(more));
      more();
    };
    try {
      const wav = Buffer.from(
        await (
          await fetch(`${service.url}/api/v1/agents/${agentId}/voice-sample`, {
            method: 'POST',
            headers: { authorization: `Bearer ${d.apiKey}`, 'content-type': 'application/json' },
            body: '{"text":"And on and on."}',
          })
        ).arrayBuffer(),
      );
      expect(wav.length - 44).toBe(SENTENCE_AUDIO_S * 24_000 * 2);
    } finally {
      speech.state.behaviour = speaks;
    }
  });

  it("speaks in the browser's voice where the deployment says so, and not at all when off", async () => {
    for (const [setting, site] of [
      ['browser', 'browser'],
      ['off', 'none'],
      ['service', 'service'],
    ]) {
      const d = await open({ speech_synthesis: setting });
      expect([setting, d.ready.speech.synthesis]).toEqual([setting, site]);
      if (site === 'service') continue;
      const turnId = await ask(d.widget, 'v1');
      await reply(d, turnId, { reply_text: 'Not from the service.' });
      await d.widget.next('reply');
      await new Promise((r) => setTimeout(r, 200));
      expect(spoken(d.widget)).toEqual([]);
    }
  });
});

describe('the synthesiser cap', () => {
  it('says at most TEXT_TO_SPEECH_CONCURRENCY sentences at once: the next waits for the place, within its own limit', async () => {
    let inFlight = 0;
    let most = 0;
    const speech = await startSpeechServer((call, res, req) => {
      inFlight++;
      most = Math.max(most, inFlight);
      res.on('close', () => inFlight--);
      if (String(call.body.input).startsWith('Hold')) return void res.writeHead(200, { 'content-type': 'audio/pcm' });
      speaks(call, res, req);
    });
    const customer = await startCustomerServer();
    const service = await startService('sqlite', {
      env: { TEXT_TO_SPEECH_URL: speech.url, TEXT_TO_SPEECH_CONCURRENCY: '1' },
      sessions: { synthesisTimeoutMs: 600 },
    });
    try {
      const d = await deploy(service, { hook_url: customer.hookUrl });
      const open = async () => {
        const widget = await Widget.open(service, d.deploymentId);
        const { conversation_id } = await widget.hello(await mintToken(d.secret, d.deploymentId));
        widget.send({ type: 'user_turn', client_turn_id: 'v1', text: 'Hi', mode: 'voice' });
        const { turn_id } = await widget.next('turn_accepted');
        await widget.next('turn_acknowledged');
        return { widget, conversation_id, turn_id };
      };
      const [holding, waiting] = await Promise.all([open(), open()]);
      const reply = (w: typeof holding, text: string) =>
        postReply(
          service,
          d.deploymentId,
          { conversation_id: w.conversation_id, turn_id: w.turn_id, reply_text: text },
          d.secret,
        );
      await reply(holding, 'Hold the only place.');
      await waitFor(async () => inFlight === 1, 2_000, 'the first synthesis');
      // Asked 200 ms later: once the place is free, it has that long left of its limit.
      await new Promise((r) => setTimeout(r, 200));
      await reply(waiting, 'Quick one.');
      // The first holds the only place until its limit; the second waits for it, then is said.
      expect(await holding.widget.next('speech_unavailable')).toMatchObject({ turn_id: holding.turn_id, sentence: 0 });
      const unavailableAt = Date.now();
      expect(await waiting.widget.next('speech_end')).toMatchObject({ turn_id: waiting.turn_id, sentence: 0 });
      expect(Date.now() - unavailableAt).toBeLessThan(500);
      expect([most, speech.calls.map((c) => c.body.input)]).toEqual([1, ['Hold the only place.', 'Quick one.']]);
    } finally {
      await service.close();
      await customer.close();
      await speech.close();
    }
  });
});

describe("the README's speech servers", () => {
  it('Kokoro and Piper as the README sets them up: its URL path, model and example voice, against a server that speaks the protocol', async () => {
    const readme = readFileSync(join(import.meta.dirname, '../../../../README.md'), 'utf8');
    const examples = [
      ...readme.matchAll(
        /TEXT_TO_SPEECH_URL=(\S+)\s+TEXT_TO_SPEECH_MODEL=(\S+)\s+HOOK_ALLOWED_HOSTS=\S+`, voices such as `(\w+)`/g,
      ),
    ].map((m) => ({ url: new URL(m[1]!), model: m[2]!, voice: m[3]! }));
    expect(examples.map((e) => [e.url.port, e.model, e.voice])).toEqual([
      ['8880', 'kokoro', 'af_heart'],
      ['8000', 'tts-1', 'alloy'],
    ]);
    const customer = await startCustomerServer();
    for (const example of examples) {
      const speech = await startSpeechServer();
      // The same path and model, on the port this test's server has.
      const url = new URL(example.url.pathname, speech.url).toString();
      const service = await startService('sqlite', {
        env: { TEXT_TO_SPEECH_URL: url, TEXT_TO_SPEECH_MODEL: example.model },
      });
      try {
        const d = await deploy(service, { hook_url: customer.hookUrl });
        const agentId = (await d.api.get(`/api/v1/deployments/${d.deploymentId}`)).body.data.agent_id;
        const sample = await d.api.post(`/api/v1/agents/${agentId}/voice-sample`, {
          text: 'Welcome.',
          voice: { voice: example.voice },
        });
        expect(sample.status).toBe(200);
        expect(speech.calls.map((c) => c.body)).toEqual([
          { model: example.model, input: 'Welcome.', voice: example.voice, speed: 1, response_format: 'pcm' },
        ]);
      } finally {
        await service.close();
        await speech.close();
      }
    }
    await customer.close();
  });
});

describe.skipIf(!installed('espeak-ng'))('espeak-ng on this machine', () => {
  it('says a sentence as real audio: 22.05 kHz, its length in proportion, not silence, in a voice for the language', async () => {
    const engine = espeakNg();
    const say = async (text: string, language: string) => {
      const chunks: Buffer[] = [];
      await engine.synthesise(
        { text, voice: undefined, speed: 1, language },
        (c) => chunks.push(c),
        new AbortController().signal,
      );
      return Buffer.concat(chunks);
    };
    const short = await say('Hello.', 'en-US');
    const long = await say('Welcome to the hotel. Breakfast is served from seven until eleven.', 'en-US');
    expect(engine.sampleRate).toBe(22_050);
    expect(short.length / 2 / 22_050).toBeGreaterThan(0.3);
    expect(long.length).toBeGreaterThan(short.length * 4);
    expect(rms(long)).toBeGreaterThan(500);
    expect([
      engine.voiceFor({ voice: undefined, language: 'de-DE' }),
      engine.voiceFor({ voice: undefined, language: 'pt-BR' }),
    ]).toEqual(['de', 'pt-br']);
    expect(rms(await say('Guten Morgen.', 'de-DE'))).toBeGreaterThan(500);
  });

  it('is the service voice with TEXT_TO_SPEECH=espeak-ng', async () => {
    const customer = await startCustomerServer();
    const service = await startService('sqlite', { env: { TEXT_TO_SPEECH: 'espeak-ng' } });
    try {
      const d = await deploy(service, { hook_url: customer.hookUrl });
      const widget = await Widget.open(service, d.deploymentId);
      const ready = await widget.hello(await mintToken(d.secret, d.deploymentId));
      expect(ready.speech.synthesis).toBe('service');
      widget.send({ type: 'user_turn', client_turn_id: 'v1', text: 'Hi', mode: 'voice' });
      const { turn_id } = await widget.next('turn_accepted');
      await widget.next('turn_acknowledged');
      await postReply(
        service,
        d.deploymentId,
        { conversation_id: ready.conversation_id, turn_id, reply_text: 'Good evening.' },
        d.secret,
      );
      const head = await widget.next('speech');
      await widget.next('speech_end');
      expect(head).toMatchObject({ turn_id, sentence: 0, text: 'Good evening.', sample_rate: 22_050 });
      expect(rms(sentencesSaid(spoken(widget, turn_id))[0]!.pcm)).toBeGreaterThan(500);
      widget.close();
      const agentId = (await d.api.get(`/api/v1/deployments/${d.deploymentId}`)).body.data.agent_id;
      const sample = await d.api.post(`/api/v1/agents/${agentId}/voice-sample`, { text: 'Welcome.' });
      expect(sample.status).toBe(200);
    } finally {
      await service.close();
      await customer.close();
    }
  });
});
