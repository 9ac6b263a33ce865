import { spawnSync } from 'node:child_process';
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Balancer, HAPROXY_CFG, NGINX_CONF, startHaproxy, startNginx } from '../test/balancer.js';
import { deploy, mintToken, postReply, type ServiceRef, startCustomerServer, Widget } from '../test/concierge-kit.js';
import { call } from '../test/harness.js';
import { bootstrapKey, installed, type NodeProcess, ROOT, startServiceProcess } from '../test/service-process.js';

/** A reply with a bad signature sent from `localAddress`, with an `X-Forwarded-For` of its own making. */
function badReply(base: string, deploymentId: string, localAddress: string, forged: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}/embed/concierge/${deploymentId}/replies`,
      {
        method: 'POST',
        localAddress,
        headers: {
          'content-type': 'application/json',
          'x-service-signature': `sha256=${'0'.repeat(64)}`,
          'x-forwarded-for': forged,
        },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode!);
      },
    );
    req.on('error', reject);
    req.end('{}');
  });
}

/** The files in `deploy/`, run as an operator would (README, Running several nodes). */
describe('deploy/', () => {
  let dir: string;
  let node: NodeProcess;
  let customer: Awaited<ReturnType<typeof startCustomerServer>>;
  let deployed: { deploymentId: string; secret: string };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'concierge-deploy-'));
    customer = await startCustomerServer();
    node = await startServiceProcess({
      PORT: '0',
      HOST: '127.0.0.1',
      DATA_DIR: join(dir, 'data'),
      DATABASE_URL: '',
      LOG_LEVEL: 'warn',
      HOOK_ALLOWED_HOSTS: '*@127.0.0.1',
      TRUST_PROXY: '1',
      REPLY_SIGNATURE_FAILURES_PER_MINUTE: '2',
    });
    const key = await bootstrapKey(node);
    const ref: ServiceRef = { url: node.url, newCustomer: async () => ({ customerId: '', apiKey: key }) };
    deployed = await deploy(ref, { hook_url: customer.hookUrl });
  });
  afterAll(async () => {
    node?.child.kill('SIGKILL');
    await customer?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const nodeAddress = () => new URL(node.url).host;

  /** A widget's turn through the balancer: the upgrade, the hook, a reply posted through it too. */
  async function turnThrough(balancer: Balancer): Promise<void> {
    const { deploymentId, secret } = deployed;
    const widget = await Widget.open(balancer, deploymentId);
    const ready = await widget.hello(await mintToken(secret, deploymentId));
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'Breakfast?', mode: 'text' });
    const { turn_id } = await widget.next('turn_acknowledged');
    const posted = await postReply(
      balancer,
      deploymentId,
      { conversation_id: ready.conversation_id, turn_id, reply_text: 'From 7.' },
      secret,
    );
    expect(posted.status).toBe(202);
    expect(await widget.next('reply')).toMatchObject({ type: 'reply', turn_id, text: 'From 7.' });
    widget.close();
  }

  it.skipIf(!installed('haproxy'))(
    'haproxy.cfg: checked, balances HTTP and WebSocket upgrades to /readyz-checked nodes, and passes the client address that TRUST_PROXY=1 reads',
    async () => {
      const env = {
        ...process.env,
        CONCIERGE_BIND: '127.0.0.1:1',
        CONCIERGE_NODE1: nodeAddress(),
        CONCIERGE_NODE2: nodeAddress(),
        CONCIERGE_NODE3: nodeAddress(),
      };
      const checked = spawnSync('haproxy', ['-c', '-f', HAPROXY_CFG], { env, encoding: 'utf8' });
      expect([checked.status, checked.stdout.trim()]).toEqual([0, 'Configuration file is valid']);

      const balancer = await startHaproxy(dir, [nodeAddress(), nodeAddress(), nodeAddress()]);
      try {
        expect((await call(balancer.url, 'GET', '/readyz')).body).toMatchObject({
          success: true,
          data: { status: 'ok' },
        });
        await turnThrough(balancer);
        // The balancer's own address is every request's socket address; the service tells clients
        // apart by the address HAProxy adds last, so a forged header buys no second budget of bad
        // signatures, and another client has a budget of its own.
        const { deploymentId } = deployed;
        expect(await badReply(balancer.url, deploymentId, '127.0.0.1', '203.0.113.1')).toBe(401);
        expect(await badReply(balancer.url, deploymentId, '127.0.0.1', '203.0.113.2')).toBe(401);
        expect(await badReply(balancer.url, deploymentId, '127.0.0.1', '203.0.113.3')).toBe(429);
        expect(await badReply(balancer.url, deploymentId, '127.0.0.2', '203.0.113.3')).toBe(401);
      } finally {
        await balancer.stop();
      }
    },
    30_000,
  );

  it.skipIf(!installed('nginx'))(
    'nginx.conf: passes nginx -t as written, and serves HTTP and a WebSocket turn',
    async () => {
      const checked = spawnSync('nginx', ['-t', '-c', NGINX_CONF], { encoding: 'utf8' });
      expect(checked.status, checked.stderr).toBe(0);
      expect(checked.stderr).toContain('test is successful');

      const balancer = await startNginx(dir, [nodeAddress()]);
      try {
        expect((await call(balancer.url, 'GET', '/readyz')).status).toBe(200);
        await turnThrough(balancer);
      } finally {
        await balancer.stop();
      }
    },
    30_000,
  );

  it.skipIf(!installed('systemd-analyze'))('concierge.service: systemd-analyze verify finds nothing to say', () => {
    const verified = spawnSync('systemd-analyze', ['verify', join(ROOT, 'deploy', 'concierge.service')], {
      encoding: 'utf8',
    });
    expect([verified.status, verified.stderr, verified.stdout]).toEqual([0, '', '']);
  });
});
