import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { deploy, mintToken, startCustomerServer, Widget } from '../../test/concierge-kit.js';
import { rawExchange, type ServiceOptions, type TestService, startService } from '../../test/harness.js';

/** Caps that hold before anyone has proven who they are (README, Security). */
describe('connection limits', () => {
  const cleanup: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function serviceWith(options: ServiceOptions): Promise<TestService> {
    const service = await startService('sqlite', options);
    cleanup.push(() => service.close());
    return service;
  }

  async function deployment(service: TestService) {
    const customer = await startCustomerServer();
    cleanup.push(() => customer.close());
    return deploy(service, { hook_url: customer.hookUrl });
  }

  /** Opens a socket that never says hello; resolves with it, or with the HTTP status that refused it. */
  async function silent(
    service: TestService,
    deploymentId: string,
    headers: Record<string, string> = {},
  ): Promise<Widget | string> {
    try {
      const widget = await Widget.open(service, deploymentId, headers);
      cleanup.push(() => widget.close());
      return widget;
    } catch (err) {
      return (err as Error).message;
    }
  }

  it('lets one address hold 20 sockets without hello; the 21st upgrade is 429 until one of them says hello', async () => {
    const service = await serviceWith({});
    const { deploymentId, secret } = await deployment(service);
    const held: Widget[] = [];
    for (let i = 0; i < 20; i++) held.push((await silent(service, deploymentId)) as Widget);
    expect(held.every((w) => w instanceof Widget)).toBe(true);
    expect(await silent(service, deploymentId)).toBe('HTTP 429');
    // X-Forwarded-For is the client's own word unless TRUST_PROXY says a proxy wrote it.
    expect(await silent(service, deploymentId, { 'x-forwarded-for': '203.0.113.7' })).toBe('HTTP 429');

    await held[0]!.hello(await mintToken(secret, deploymentId));
    expect(await silent(service, deploymentId)).toBeInstanceOf(Widget);
    held[1]!.close();
    await held[1]!.closed;
    await new Promise((r) => setTimeout(r, 50));
    expect(await silent(service, deploymentId)).toBeInstanceOf(Widget);
  });

  it('behind TRUST_PROXY=1, counts the address the proxy saw, not the proxy', async () => {
    const service = await serviceWith({ env: { TRUST_PROXY: '1' } });
    const { deploymentId } = await deployment(service);
    for (let i = 0; i < 25; i++)
      expect(await silent(service, deploymentId, { 'x-forwarded-for': `198.51.100.${i}` })).toBeInstanceOf(Widget);
    for (let i = 0; i < 20; i++)
      expect(await silent(service, deploymentId, { 'x-forwarded-for': '9.9.9.9, 203.0.113.7' })).toBeInstanceOf(Widget);
    // The hop before the proxy's is the client's claim: forging it changes nothing.
    expect(await silent(service, deploymentId, { 'x-forwarded-for': '1.2.3.4, 203.0.113.7' })).toBe('HTTP 429');
  });

  it('behind TRUST_PROXY=1, believes X-Forwarded-For only from an address of TRUSTED_PROXIES', async () => {
    // The test connects from 127.0.0.1, which this node does not count as its proxy.
    const service = await serviceWith({ env: { TRUST_PROXY: '1', TRUSTED_PROXIES: '10.0.0.0/8, 2001:db8::/32' } });
    const { deploymentId } = await deployment(service);
    for (let i = 0; i < 20; i++)
      expect(await silent(service, deploymentId, { 'x-forwarded-for': `198.51.100.${i}` })).toBeInstanceOf(Widget);
    expect(await silent(service, deploymentId, { 'x-forwarded-for': '198.51.100.99' })).toBe('HTTP 429');
  });

  it('holds at most MAX_CONNECTIONS sockets: past it a new one is closed at once, and serving goes on', async () => {
    const service = await serviceWith({ env: { MAX_CONNECTIONS: '10' } });
    const { port } = new URL(service.url);
    const open = (): Promise<Socket> =>
      new Promise((resolve) => {
        const socket = connect(Number(port), '127.0.0.1', () => resolve(socket));
        socket.on('error', () => {});
      });
    const held: Socket[] = [];
    for (let i = 0; i < 10; i++) held.push(await open());
    await new Promise((r) => setTimeout(r, 100));
    const extra = await open();
    const started = Date.now();
    await new Promise((resolve) => extra.on('close', resolve));
    expect(Date.now() - started).toBeLessThan(1_000);
    for (const socket of held) socket.destroy();
    await new Promise((r) => setTimeout(r, 100));
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
  });

  it('closes a socket whose headers, or whose body after them, do not arrive in time', async () => {
    // The body's own limit is far shorter than the whole request's (headers + body), so only the
    // body timer can close that socket this early.
    const service = await serviceWith({ timeouts: { headersMs: 1_000, bodyMs: 200 } });
    const { deploymentId } = await deployment(service);
    const headers = await rawExchange(service.url, 'GET /healthz HTTP/1.1\r\nHost: x\r\n');
    expect(headers.status).toBe(408);
    expect(headers.ms).toBeGreaterThanOrEqual(900);
    expect(headers.ms).toBeLessThan(3_000);
    const body = await rawExchange(
      service.url,
      `POST /embed/concierge/${deploymentId}/replies HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"conv`,
    );
    expect(body.ms).toBeGreaterThanOrEqual(150);
    expect(body.ms).toBeLessThan(900);
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
  });
});
