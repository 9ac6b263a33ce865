import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploy, startCustomerServer } from '../../../test/concierge-kit.js';
import { call, expectError, type StoreKind, startService, type TestService } from '../../../test/harness.js';

const STALL_MS = 1_500;

/** An export read over a socket of its own, which stops reading after its first bytes. */
class StalledExport {
  readonly socket: Socket;
  received = 0;
  closed = false;
  readonly firstBytes: Promise<string>;

  constructor(url: string, apiKey: string) {
    const { port } = new URL(url);
    this.socket = connect(Number(port), '127.0.0.1');
    this.socket.write(
      `GET /api/v1/conversations/export HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\n\r\n`,
    );
    this.socket.on('close', () => (this.closed = true));
    this.socket.on('error', () => {});
    this.firstBytes = new Promise((resolve) =>
      this.socket.once('data', (chunk: Buffer) => {
        this.received += chunk.length;
        this.socket.pause();
        resolve(chunk.toString('latin1'));
      }),
    );
  }

  /** Reads on to the end: resolves with what came after the first bytes once the server closed or finished. */
  readRest(waitMs: number): Promise<string> {
    let rest = '';
    this.socket.on('data', (chunk: Buffer) => (rest += chunk.toString('latin1')));
    this.socket.resume();
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.socket.destroy();
        resolve(rest);
      }, waitMs);
      this.socket.once('close', () => {
        clearTimeout(timer);
        resolve(rest);
      });
      // A response sent whole ends with the last chunk; the socket stays open for the next request.
      this.socket.on('data', () => {
        if (rest.endsWith('\r\n0\r\n\r\n')) {
          clearTimeout(timer);
          resolve(rest);
        }
      });
    });
  }
}

function suite(kind: StoreKind) {
  let service: TestService;
  let apiKey: string;
  let customer: Awaited<ReturnType<typeof startCustomerServer>>;

  beforeAll(async () => {
    customer = await startCustomerServer();
    service = await startService(kind, { timeouts: { streamStallMs: STALL_MS } });
    const deployed = await deploy(service, { hook_url: customer.hookUrl });
    apiKey = deployed.apiKey;
    const db = service.app.store.db;
    const { customer_id, agent_id } = await db
      .selectFrom('deployments')
      .select(['customer_id', 'agent_id'])
      .where('id', '=', deployed.deploymentId)
      .executeTakeFirstOrThrow();
    // About 20 MB of export: far more than the sockets' buffers hold, so a client that stops reading stops it.
    const start = Date.parse('2026-01-01T00:00:00.000Z');
    for (let offset = 0; offset < 10_000; offset += 1_000) {
      const rows = Array.from({ length: 1_000 }, (_, i) => {
        const at = new Date(start + (offset + i) * 1000).toISOString();
        return {
          id: crypto.randomUUID(),
          customer_id,
          deployment_id: deployed.deploymentId,
          agent_id,
          user_sub: `bulk-${offset + i}`,
          user_name: 'n'.repeat(2_000),
          user_ctx: null,
          status: 'ended' as const,
          end_reason: 'user_ended' as const,
          ended_at: at,
          agent_version: 1,
          last_seq: 0,
          turn_count: 0,
          handler: 'agent' as const,
          handler_name: null,
          needs_person: 0 as const,
          handoff_reason: null,
          handoff_at: null,
          preview: 0 as const,
          wait_told_at: null,
          created_at: at,
          updated_at: at,
        };
      });
      await db.insertInto('conversations').values(rows).execute();
    }
  });
  afterAll(async () => {
    await service?.close();
    await customer?.close();
  });

  it('cuts an export whose client makes no progress for the stall time, and its slot is free again', async () => {
    const stalled = new StalledExport(service.url, apiKey);
    expect(await stalled.firstBytes).toMatch(/^HTTP\/1\.1 200/);
    await new Promise((resolve) => setTimeout(resolve, STALL_MS * 2));
    const rest = await stalled.readRest(10_000);
    // Cut: the socket closed before the response's last chunk.
    expect(stalled.closed).toBe(true);
    expect(rest.endsWith('\r\n0\r\n\r\n')).toBe(false);
    expect(rest.length + stalled.received).toBeLessThan(20_000_000);
  });

  it('runs at most 2 exports at once per customer: the 3rd gets 429 with Retry-After; another customer is not held', async () => {
    const first = new StalledExport(service.url, apiKey);
    const second = new StalledExport(service.url, apiKey);
    await Promise.all([first.firstBytes, second.firstBytes]);
    const third = await call(service.url, 'GET', '/api/v1/conversations/export', { key: apiKey });
    expectError(third, 429, 'rate_limited');
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const other = await service.newCustomer('Another hotel');
    expect((await call(service.url, 'GET', '/api/v1/conversations/export', { key: other.apiKey })).status).toBe(200);
    first.socket.destroy();
    second.socket.destroy();
    await expect
      .poll(
        async () =>
          (await call(service.url, 'GET', '/api/v1/conversations/export?status=open', { key: apiKey })).status,
      )
      .toBe(200);
  });
}

// The limits live in the HTTP layer, whatever the store.
describe('conversation export limits [sqlite]', () => suite('sqlite'));
