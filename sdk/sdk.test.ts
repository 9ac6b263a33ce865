import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { transcriptEventTypes } from '#protocol/transcript-events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Balancer, startHaproxy } from '../server/test/balancer.js';
import { deploy, deployAgent, headerOf, type ServiceRef, Widget } from '../server/test/concierge-kit.js';
import { signatureOf, standardWebhookHeaders } from '../server/src/concierge/signature.js';
import { waitFor } from '../server/test/harness.js';
import {
  bootstrapKey,
  freePort,
  installed,
  type NodeProcess,
  startNodeProcess,
  startProcess,
  startServiceProcess,
} from '../server/test/service-process.js';
import { mintUserToken, verifyHook } from './node/src/index.js';
import { send, startModelServer, streamOf, toolCallStream } from '../server/test/model-server.js';

/**
 * Both SDKs against a real service: the same customer server written with each
 * (`sdk/node/examples/hotel.ts`, `sdk/python/examples/hotel.py`) takes real hook calls and
 * transcript events, mints the visitors' tokens, streams replies through a stop and start of the
 * service behind HAProxy (whose 503s it retries), and hands a conversation to a person and back.
 */
const PYTHON = installed('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

const HOTELS = {
  node: (env: NodeJS.ProcessEnv) => startNodeProcess('sdk/node/examples/hotel.ts', env, /^Hotel at (http:\S+)$/m),
  python: (env: NodeJS.ProcessEnv) =>
    startProcess(PYTHON, ['sdk/python/examples/hotel.py'], env, /^Hotel at (http:\S+)$/m),
} as const;

describe('the SDKs against a real service', () => {
  let dir: string;
  let servicePort: number;
  let service: NodeProcess;
  let balancer: Balancer | undefined;
  let key: string;
  /** Where replies go: the balancer when HAProxy is here, so a stopped node answers 503. */
  let publicUrl: string;
  const startService = () =>
    startServiceProcess({
      PORT: String(servicePort),
      HOST: '127.0.0.1',
      DATA_DIR: join(dir, 'data'),
      LOG_LEVEL: 'warn',
      DATABASE_URL: '',
      HOOK_ALLOWED_HOSTS: '*@127.0.0.1',
      PUBLIC_BASE_URL: publicUrl,
    });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'concierge-sdk-'));
    servicePort = await freePort();
    const balancerPort = await freePort();
    publicUrl = installed('haproxy') ? `http://127.0.0.1:${balancerPort}` : `http://127.0.0.1:${servicePort}`;
    service = await startService();
    key = await bootstrapKey(service);
    if (installed('haproxy')) balancer = await startHaproxy(dir, [`127.0.0.1:${servicePort}`], balancerPort);
  });
  afterAll(async () => {
    await balancer?.stop();
    service.child.kill('SIGTERM');
    await service.exited;
    rmSync(dir, { recursive: true, force: true });
  });

  describe.each(Object.keys(HOTELS) as (keyof typeof HOTELS)[])('%s', (language) => {
    let hotel: NodeProcess;
    let hotelUrl: string;
    let deployed: Awaited<ReturnType<typeof deploy>>;
    const startHotel = async (secrets: string[]) => {
      hotel?.child.kill('SIGKILL');
      await hotel?.exited;
      hotel = await HOTELS[language]({
        CONCIERGE_SECRETS: secrets.join(','),
        DEPLOYMENT_ID: deployed.deploymentId,
        CONCIERGE_URL: service.url,
        CONCIERGE_API_KEY: key,
        PORT: new URL(hotelUrl).port,
        STREAM_EVERY_MS: '150',
      });
    };
    const tool = async (path: string, body: unknown = {}) => {
      const res = await fetch(`${hotelUrl}${path}`, { method: 'POST', body: JSON.stringify(body) });
      const value = (await res.json()) as any;
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${JSON.stringify(value)}`);
      return value;
    };
    /** A visitor with a token from the hotel's `/token`, or minted here (when the hotel's secret is wrong on purpose). */
    const visitor = async (sub: string, token?: string) => {
      const widget = await Widget.open(service, deployed.deploymentId);
      const ready = await widget.hello(token ?? (await tool('/token', { sub })).token);
      return { widget, ready };
    };
    const ask = (widget: Widget, text: string) =>
      widget.send({ type: 'user_turn', client_turn_id: `c-${Math.random()}`, text, mode: 'text' });

    beforeAll(async () => {
      hotelUrl = `http://127.0.0.1:${await freePort()}`;
      const ref: ServiceRef = { url: service.url, newCustomer: async () => ({ customerId: '', apiKey: key }) };
      deployed = await deploy(ref, { hook_url: `${hotelUrl}/hook`, transcript_hook_url: `${hotelUrl}/transcript` });
      await startHotel([deployed.secret]);
    });
    afterAll(async () => {
      hotel.child.kill('SIGKILL');
      await hotel.exited;
    });

    it('mints tokens the service accepts, with their claims, and answers a turn it verified', async () => {
      const { widget, ready } = await visitor('guest-1');
      expect(ready.resumed).toBe(false);
      ask(widget, 'When is breakfast?');
      expect((await widget.next('reply')).text).toBe('You said: When is breakfast?');
      widget.close();
      const calls = await deployed.api.get(`/api/v1/deliveries?deployment_id=${deployed.deploymentId}&kind=turn_hook`);
      const body = JSON.parse(calls.body.data[0].request.body);
      expect(body.user).toEqual({ sub: 'guest-1', name: 'Guest', ctx: { room: '214' } });
      expect(calls.body.data[0].response.status).toBe(200);
      // The transcript events came through the same handler, verified and typed.
      await waitFor(
        async () => (await tool('/events')).some((e: any) => e.type === 'turn.resolved'),
        10_000,
        'turn.resolved at the hotel',
      );
      const types = (await tool('/events')).map((e: any) => e.type);
      expect(types.slice(0, 4)).toEqual(['conversation.started', 'turn.created', 'turn.acknowledged', 'turn.resolved']);
    });

    it("answers a model agent's tool call the service signed, and the model is given its answer", async () => {
      const model = await startModelServer((call, res) => {
        const result = call.body.messages.find((m) => m.role === 'tool');
        if (!result)
          return send(res, toolCallStream(call.body.model, [{ name: 'check_room', arguments: { night: 'Friday' } }]));
        send(res, streamOf(call.body.model, `The hotel said ${result.content}`));
      });
      try {
        const endpoint = await deployed.api.post('/api/v1/model-endpoints', { name: 'Test', base_url: model.baseUrl });
        const tool = {
          name: 'check_room',
          description: 'Whether a room is free',
          parameters: { type: 'object', properties: { night: { type: 'string' } }, required: ['night'] },
          url: `${hotelUrl}/tool`,
        };
        const ref: ServiceRef = { url: service.url, newCustomer: async () => ({ customerId: '', apiKey: key }) };
        const agent = await deployAgent(ref, deployed.api, {
          responder: { type: 'model', endpoint_id: endpoint.body.data.id, model: 'm', tools: [tool] },
        });
        const { widget } = await agent.visitor('g');
        ask(widget, 'Is a room free on Friday?');
        // The hotel verifies with the deployment's own secret: this one's, which it was not started with, is refused.
        expect((await widget.next('reply', 10_000)).text).toBe('The hotel said {"error":"the tool failed (HTTP 401)"}');
        widget.close();
        await startHotel([agent.secret]);
        const again = (await agent.visitor('g2')).widget;
        ask(again, 'Is a room free on Friday?');
        expect((await again.next('reply', 10_000)).text).toBe('The hotel said {"night":"Friday","free":true}');
        again.close();
      } finally {
        await startHotel([deployed.secret]);
        await model.close();
      }
    });

    it('refuses a tampered body, a stale timestamp, a wrong secret and a call without a signature', async () => {
      const calls = await deployed.api.get(
        `/api/v1/deliveries?deployment_id=${deployed.deploymentId}&kind=turn_hook&per_page=1`,
      );
      const { headers, body } = calls.body.data[0].request as { headers: Record<string, string>; body: string };
      const post = (raw: string, sent: Record<string, string>) =>
        fetch(`${hotelUrl}/hook`, {
          method: 'POST',
          body: raw,
          headers: { 'content-type': 'application/json', ...sent },
        });
      const refusal = async (res: Response) => [res.status, ((await res.json()) as { error: string }).error];
      const standard = Object.fromEntries(
        ['webhook-id', 'webhook-timestamp', 'webhook-signature'].map((h) => [h, headerOf(headers, h)!]),
      );
      const service = { 'x-service-signature': headerOf(headers, 'X-Service-Signature')! };

      const tampered = body.replace('When is breakfast?', 'When is dinner???');
      expect(await refusal(await post(tampered, standard))).toEqual([401, 'invalid_signature']);
      // X-Service-Signature alone signs no time: refused by default, whatever it signs.
      expect(await refusal(await post(body, service))).toEqual([401, 'missing_signature']);
      expect(await refusal(await post(tampered, service))).toEqual([401, 'missing_signature']);
      const stale = Math.floor(Date.now() / 1000) - 600;
      expect(
        await refusal(await post(body, standardWebhookHeaders('x', body, [deployed.secret], stale * 1000))),
      ).toEqual([401, 'stale_timestamp']);
      const wrong = 'whsec_' + Buffer.alloc(30, 7).toString('base64');
      expect(await refusal(await post(body, standardWebhookHeaders('x', body, [wrong])))).toEqual([
        401,
        'invalid_signature',
      ]);
      expect(await refusal(await post(body, {}))).toEqual([401, 'missing_signature']);
      // The recorded call itself is still good within the tolerance: a retry of it gets the first answer.
      expect((await post(body, standard)).status).toBe(200);
      // Opted into, X-Service-Signature alone is dated by the signed sent_at.
      const alone = { now: new Date(), allowServiceSignatureAlone: true };
      expect(verifyHook(body, service, deployed.secret, alone)).toMatchObject({
        type: 'turn.created',
        text: 'When is breakfast?',
      });
      const old = body.replace(/"sent_at":"[^"]+"/, `"sent_at":"${new Date(Date.now() - 600_000).toISOString()}"`);
      expect(() =>
        verifyHook(old, { 'x-service-signature': signatureOf(deployed.secret, old) }, deployed.secret, alone),
      ).toThrow('sent_at is more than 300 s from now');
      expect(() =>
        verifyHook(body, { 'x-service-signature': signatureOf(wrong, body) }, deployed.secret, alone),
      ).toThrow('X-Service-Signature does not match');
    });

    it('streams a reply the widget receives in order, then whole', async () => {
      const { widget } = await visitor('guest-2');
      ask(widget, 'Please stream it');
      const reply = await widget.next('reply', 10_000);
      expect(reply.text).toBe('One two three four five six seven eight, for "Please stream it".');
      const parts = widget.frames.filter((f) => f.type === 'reply_part');
      expect(parts.map((p) => p.part)).toEqual(parts.map((_, i) => i));
      expect(parts.map((p) => p.text).join('')).toBe(reply.text);
      expect(parts.every((p) => p.seq < reply.seq)).toBe(true);
      widget.close();
    });

    it.skipIf(!installed('haproxy'))(
      'keeps streaming through a stop and start of the service, retrying its 503s',
      async () => {
        const { widget, ready } = await visitor('guest-3');
        ask(widget, 'Stream through a restart');
        await widget.next('reply_part', 10_000);
        await widget.next('reply_part', 10_000);
        service.child.kill('SIGTERM');
        await service.exited;
        const lastSeq = Math.max(...widget.frames.map((f) => f.seq ?? 0));
        // Long enough for HAProxy to find the node down and answer 503 itself.
        await waitFor(async () => /retry \d+ after 503/.test(hotel.stdout()), 10_000, 'a retried 503');
        service = await startService();
        const again = await Widget.open(service, deployed.deploymentId);
        await again.hello((await tool('/token', { sub: 'guest-3' })).token, {
          conversation_id: ready.conversation_id,
          last_seq: lastSeq,
        });
        const reply = await again.next('reply', 20_000);
        const parts = [...widget.frames, ...again.frames].filter((f) => f.type === 'reply_part');
        expect(parts.map((p) => p.part)).toEqual(parts.map((_, i) => i));
        expect(parts.map((p) => p.text).join('')).toBe(reply.text);
        expect(reply.text).toBe('One two three four five six seven eight, for "Stream through a restart".');
        again.close();
      },
      40_000,
    );

    it('hands over to a person, who answers through the SDK and gives the conversation back', async () => {
      const { widget, ready } = await visitor('guest-4');
      const conversation = ready.conversation_id;
      ask(widget, 'Can I talk to a person?');
      expect((await widget.next('reply')).text).toBe('I am asking the front desk to join.');
      expect((await deployed.api.get(`/api/v1/conversations/${conversation}`)).body.data.needs_person).toBe(true);
      await tool('/takeover', { conversation_id: conversation, name: 'Ana' });
      expect((await widget.next('operator_joined')).name).toBe('Ana');
      ask(widget, 'Are you there?');
      let waiting = await widget.next('turn_accepted');
      while (waiting.text !== 'Are you there?') waiting = await widget.next('turn_accepted');
      const answered = await tool('/answer', {
        conversation_id: conversation,
        turn_id: waiting.turn_id,
        text: 'Yes, Ana here.',
      });
      expect(answered).toMatchObject({ turn_id: waiting.turn_id, status: 'resolved', duplicate: false });
      expect(await widget.next('reply')).toMatchObject({ text: 'Yes, Ana here.', name: 'Ana' });
      await tool('/release', { conversation_id: conversation });
      expect((await widget.next('operator_left')).name).toBe('Ana');
      ask(widget, 'Thanks');
      expect((await widget.next('reply')).text).toBe('You said: Thanks');
      // A second release is refused by the service, and the SDK says so with its code.
      await expect(tool('/release', { conversation_id: conversation })).rejects.toThrow(/invalid_state/);
      widget.close();
    });

    it('verifies through a rotation: the old secret during the grace, the new one, and never a wrong one', async () => {
      const rotated = await deployed.api.post(`/api/v1/deployments/${deployed.deploymentId}/rotate-secret`, {
        grace_period_s: 600,
      });
      const fresh: string = rotated.body.data.signing_secret;
      const answered = async (sub: string, token?: string) => {
        const { widget } = await visitor(sub, token);
        ask(widget, 'Still there?');
        const outcome = await Promise.race([
          widget.next('reply').then((f) => f.text),
          widget.next('turn_failed').then((f) => f.reason),
        ]);
        widget.close();
        return outcome;
      };
      // The hotel still knows only the old secret: the call carries a signature by each.
      expect(await answered('guest-5')).toBe('You said: Still there?');
      await startHotel([fresh, deployed.secret]);
      expect(await answered('guest-6')).toBe('You said: Still there?');
      await startHotel(['whsec_' + Buffer.alloc(30, 9).toString('base64')]);
      expect(
        await answered(
          'guest-7',
          mintUserToken({ deploymentId: deployed.deploymentId, secret: fresh, sub: 'guest-7' }),
        ),
      ).toBe('hook_rejected');
      deployed.secret = fresh;
      await startHotel([fresh]);
    });
  });

  it("passes the Python SDK's own tests (python3 -m unittest, standard library only)", () => {
    const run = spawnSync(PYTHON, ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.'], {
      cwd: join(import.meta.dirname, 'python'),
      encoding: 'utf8',
    });
    expect(run.stderr, run.stdout).toMatch(/^OK$/m);
    expect(Number(/^Ran (\d+) tests/m.exec(run.stderr)?.[1])).toBeGreaterThanOrEqual(20);
    expect(run.stderr).not.toMatch(/skipped/);
    expect(run.status).toBe(0);
  });

  it("the Python SDK knows every transcript event the service sends, in the service's order", () => {
    const source = readFileSync(join(import.meta.dirname, 'python', 'concierge_server', 'signatures.py'), 'utf8');
    const listed = /TRANSCRIPT_EVENT_TYPES = \(([^)]*)\)/
      .exec(source)![1]!
      .match(/"[^"]+"/g)!
      .map((t) => JSON.parse(t));
    expect(listed).toEqual([...transcriptEventTypes]);
  });
});
