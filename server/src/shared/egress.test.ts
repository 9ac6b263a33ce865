import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploy, deployAgent, mintToken, startCustomerServer, Widget } from '../../test/concierge-kit.js';
import { send, startModelServer, streamOf, toolCallStream } from '../../test/model-server.js';
import { client, startService } from '../../test/harness.js';
import { type EgressPolicy, egressFor, exchange, isForbiddenAddress, parseAllowedHosts } from './egress.js';

/** Why a POST through the guard got no answer, or its status and body. */
async function outcome(url: string, policy: EgressPolicy): Promise<string> {
  const ex = await exchange(url, '{}', {}, 2_000, policy);
  return ex.response
    ? `${ex.response.status} ${JSON.stringify(ex.response.body)}`
    : `${ex.error!.kind}: ${ex.error!.message}`;
}

describe('the egress guard', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((_req, res) => res.writeHead(202).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const guarded = { allowedHosts: [] };

  it('classifies loopback, private, link-local, metadata and mapped addresses as forbidden, public ones not', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fd00::1',
      'fe80::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
    ]) {
      expect([address, isForbiddenAddress(address)]).toEqual([address, true]);
    }
    for (const address of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
      expect([address, isForbiddenAddress(address)]).toEqual([address, false]);
  });

  it('refuses every IPv6 form that embeds an IPv4 address a gateway would reach for us', () => {
    const embedding = [
      '64:ff9b::7f00:1', // NAT64 (RFC 6052) of 127.0.0.1
      '64:ff9b::a00:1', // NAT64 of 10.0.0.1
      '64:ff9b::5db8:d822', // NAT64 of a public address: still a gateway's choice, not ours
      '64:ff9b:1::a9fe:a9fe', // local-use NAT64 (RFC 8215) of 169.254.169.254
      '2002:7f00:1::', // 6to4 of 127.0.0.1
      '2002:a9fe:a9fe::1', // 6to4 of the metadata address
      '2001:0:4136:e378:8000:63bf:3fff:fdd2', // Teredo
      '::7f00:1', // IPv4-compatible (::/96) 127.0.0.1
      '::a9fe:a9fe',
      '::ffff:0:7f00:1', // RFC 6145 translated
      '::ffff:169.254.169.254', // mapped
      '::ffff:7f00:1', // mapped, hex spelling
      '2001:db8::1', // documentation range
      'ff02::1', // multicast
      'not an address',
    ];
    for (const address of embedding) expect([address, isForbiddenAddress(address)]).toEqual([address, true]);
  });

  it('refuses an IP literal and a name that resolves to loopback, before any byte is sent', async () => {
    expect(await outcome(`http://127.0.0.1:${port}/hook`, guarded)).toMatch(/^egress_refused: /);
    expect(await outcome(`http://[::ffff:127.0.0.1]:${port}/hook`, guarded)).toMatch(/^egress_refused: /);
    for (const literal of ['[64:ff9b::7f00:1]', '[2002:7f00:1::]', '[::7f00:1]']) {
      expect(await outcome(`http://${literal}:${port}/hook`, guarded)).toMatch(/^egress_refused: /);
    }
    expect(await outcome(`http://localhost:${port}/hook`, guarded)).toMatch(
      /^egress_refused: localhost resolves to a non-public address/,
    );
  });

  it('lets through hosts listed in HOOK_ALLOWED_HOSTS, and names that variable when it refuses', async () => {
    expect(await outcome(`http://localhost:${port}/hook`, { allowedHosts: parseAllowedHosts('*@localhost') })).toBe(
      '202 ""',
    );
    expect(await outcome(`http://127.0.0.1:${port}/hook`, { allowedHosts: parseAllowedHosts('*@127.0.0.1') })).toBe(
      '202 ""',
    );
    expect(await outcome(`http://127.0.0.1:${port}/hook`, { allowedHosts: parseAllowedHosts('*@localhost') })).toBe(
      `egress_refused: 127.0.0.1 is not a public address; the service calls only public addresses unless HOOK_ALLOWED_HOSTS allows WHO@127.0.0.1:${port}`,
    );
  });

  it('never calls a URL with a user name or password, allowed host or not: Node would send them as a header the record does not show', async () => {
    const allowed = { allowedHosts: parseAllowedHosts('*@127.0.0.1') };
    for (const credentials of ['user:pass@', 'token@', ':secret@']) {
      expect(await outcome(`http://${credentials}127.0.0.1:${port}/hook`, allowed)).toBe(
        'egress_refused: a URL with a user name or password is never called; put a token in the path',
      );
    }
  });

  it('lets a host:port entry through on that port only, however the address is spelled', async () => {
    const demoOnly = { allowedHosts: parseAllowedHosts(` *@127.0.0.1:${port} , *@LocalHost:${port}`) };
    expect(await outcome(`http://127.0.0.1:${port}/hook`, demoOnly)).toBe('202 ""');
    expect(await outcome(`http://localhost:${port}/hook`, demoOnly)).toBe('202 ""');
    const other = port === 65535 ? port - 1 : port + 1;
    // Another service on the same host: every spelling of 127.0.0.1 is the same host, on a port not listed.
    for (const spelling of ['127.0.0.1', '2130706433', '0x7f000001', '127.1', '0177.0.0.1', 'localhost']) {
      expect(await outcome(`http://${spelling}:${other}/secret`, demoOnly)).toMatch(/^egress_refused: /);
    }
    expect(await outcome(`http://127.0.0.1/secret`, demoOnly)).toMatch(/^egress_refused: /);
    const customer = '0b0e9a8e-6f1c-4a55-9a55-2a3c4d5e6f70';
    expect(
      parseAllowedHosts(`*@[::1]:8788,speech@::1,${customer.toUpperCase()}@hooks.internal:443,knowledge@10.0.0.5`),
    ).toEqual([
      { host: '[::1]', port: 8788, opens: 'all' },
      { host: '[::1]', opens: { use: 'speech' } },
      { host: 'hooks.internal', port: 443, opens: { customer } },
      { host: '10.0.0.5', opens: { use: 'knowledge' } },
    ]);
    for (const bad of ['*@host:0', '*@host:65536', '*@host:http', '*@:80', '*@[::1', 'nobody@host', '127.0.0.1:3000'])
      expect(() => parseAllowedHosts(bad)).toThrow(/HOOK_ALLOWED_HOSTS/);
    expect(() => parseAllowedHosts('127.0.0.1:3000')).toThrow(
      'HOOK_ALLOWED_HOSTS: "127.0.0.1:3000" does not say whom it opens: write CUSTOMER_ID@127.0.0.1:3000 for one customer, hooks@, models@, knowledge@, speech@, embeddings@ for one use, or *@127.0.0.1:3000 for everything',
    );
  });

  it('opens a host for the customer or the use an entry names, and for no one else', async () => {
    const a = '0b0e9a8e-6f1c-4a55-9a55-2a3c4d5e6f70';
    const b = '1c1f0b9f-7a2d-4b66-8b66-3b4d5e6f7a81';
    const policy = { allowedHosts: parseAllowedHosts(`${a}@127.0.0.1:${port},speech@localhost:${port}`) };
    const url = (host: string) => `http://${host}:${port}/hook`;
    expect(await outcome(url('127.0.0.1'), egressFor(policy, 'hooks', a))).toBe('202 ""');
    expect(await outcome(url('127.0.0.1'), egressFor(policy, 'knowledge', a))).toBe('202 ""');
    expect(await outcome(url('127.0.0.1'), egressFor(policy, 'knowledge', b))).toMatch(/^egress_refused: /);
    expect(await outcome(url('127.0.0.1'), egressFor(policy, 'speech'))).toMatch(/^egress_refused: /);
    expect(await outcome(url('localhost'), egressFor(policy, 'speech'))).toBe('202 ""');
    expect(await outcome(url('localhost'), egressFor(policy, 'hooks', b))).toMatch(/^egress_refused: /);
  });
});

describe('a service with no HOOK_ALLOWED_HOSTS, in the default mode', () => {
  it('never calls a hook or transcript target on loopback: the turn fails, the log says what to set', async () => {
    const service = await startService('sqlite', { hookAllowedHosts: '' });
    const customer = await startCustomerServer();
    try {
      const { deploymentId, secret } = await deploy(service, {
        hook_url: customer.hookUrl,
        transcript_hook_url: customer.transcriptUrl,
      });
      const widget = await Widget.open(service, deploymentId);
      await widget.hello(await mintToken(secret, deploymentId));
      widget.send({ type: 'user_turn', client_turn_id: 'probe', text: 'Is port 39001 open?', mode: 'text' });
      const { turn_id } = await widget.next('turn_accepted');
      expect(await widget.next('turn_failed', 8_000)).toMatchObject({ turn_id, reason: 'hook_failed' });
      await new Promise((r) => setTimeout(r, 1_500));
      expect([customer.calls.length, customer.transcript.length]).toEqual([0, 0]);
      const refusal = service.logs.find((l) => l.includes('turn hook failed'));
      // The refusal names the entries that would allow it: for every customer's hooks, or this one's.
      expect(refusal).toContain(
        `127.0.0.1 is not a public address; the service calls only public addresses unless its operator allows this one in HOOK_ALLOWED_HOSTS: hooks@127.0.0.1:${new URL(customer.hookUrl).port} (every customer's hooks, transcript targets and tools) or `,
      );
      widget.close();
    } finally {
      await service.close();
      await customer.close();
    }
  }, 15_000);
});

describe("a customer's tools", () => {
  it("go out as that customer's hooks: a host opened for another customer, or for the models, is refused to them", async () => {
    const tools = await startCustomerServer((_call, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"free":true}'),
    );
    const model = await startModelServer((call, res) =>
      send(
        res,
        call.body.messages.some((m) => m.role === 'tool')
          ? streamOf('m', `Told: ${call.body.messages.at(-1)!.content}`)
          : toolCallStream('m', [{ name: 'check_room', arguments: {} }]),
      ),
    );
    const toolsHost = new URL(tools.hookUrl).host;
    let service = await startService('sqlite', { hookAllowedHosts: '' });
    try {
      const a = await service.newCustomer('A');
      const b = await service.newCustomer('B');
      // The model server is open to every customer's model endpoints; the tools' server to A alone, and to every model endpoint.
      service = await service.restart({
        hookAllowedHosts: `models@${new URL(model.baseUrl).host},${a.customerId}@${toolsHost},models@${toolsHost}`,
      });
      const toolReply = async (apiKey: string) => {
        const api = client(service.url, apiKey);
        const endpoint = (await api.post('/api/v1/model-endpoints', { name: 'Test', base_url: model.baseUrl })).body
          .data;
        const tool = {
          name: 'check_room',
          description: 'Whether a room is free',
          parameters: { type: 'object', properties: {} },
          url: tools.hookUrl,
        };
        const agent = await deployAgent(service, api, {
          responder: { type: 'model', endpoint_id: endpoint.id, model: 'm', tools: [tool] },
        });
        const { widget } = await agent.visitor();
        widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Is a room free?', mode: 'text' });
        const reply = await widget.next('reply', 15_000);
        widget.close();
        return reply.text as string;
      };
      const before = tools.calls.length;
      expect(await toolReply(a.apiKey)).toContain('free');
      expect(tools.calls.length - before).toBe(1);
      expect(await toolReply(b.apiKey)).toContain('not a public address');
      expect(tools.calls.length - before).toBe(1);
    } finally {
      await service.close();
      await tools.close();
      await model.close();
    }
  }, 30_000);
});

describe('a host HOOK_ALLOWED_HOSTS opens for one customer', () => {
  it("is that customer's alone: another customer cannot fetch it as a knowledge page, nor call it as a hook", async () => {
    const site = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/plain' }).end('Internal wiki: the safe code is 1234.'),
    );
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    const page = `http://127.0.0.1:${(site.address() as AddressInfo).port}/wiki`;
    let service = await startService('sqlite', { hookAllowedHosts: '' });
    try {
      const a = await service.newCustomer('A');
      const b = await service.newCustomer('B');
      service = await service.restart({ hookAllowedHosts: `${a.customerId}@${new URL(page).host}` });
      const addPage = async (apiKey: string) => {
        const api = client(service.url, apiKey);
        const base = (await api.post('/api/v1/knowledge-bases', { name: 'Wiki' })).body.data.id;
        return api.post(`/api/v1/knowledge-bases/${base}/documents`, { url: page });
      };
      expect((await addPage(a.apiKey)).status).toBe(201);
      const refused = await addPage(b.apiKey);
      expect(refused.status).toBe(400);
      expect(refused.body.error.details[0].message).toContain(
        `is not a public address; the service calls only public addresses unless its operator allows this one in HOOK_ALLOWED_HOSTS: knowledge@${new URL(page).host} (every customer's knowledge pages) or ${b.customerId}@${new URL(page).host} (this customer's alone)`,
      );
    } finally {
      await service.close();
      await new Promise((resolve) => site.close(resolve));
    }
  });
});
