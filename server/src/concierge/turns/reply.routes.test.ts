import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploy, mintToken, postReply, sign, startCustomerServer, Widget } from '../../../test/concierge-kit.js';
import { type TestService, startService } from '../../../test/harness.js';

/** README, Security: guessing signatures is slowed down per client address. */
describe('badly signed replies', () => {
  let service: TestService;
  let customer: Awaited<ReturnType<typeof startCustomerServer>>;
  beforeAll(async () => {
    service = await startService('sqlite');
    customer = await startCustomerServer();
  });
  afterAll(async () => {
    await service.close();
    await customer.close();
  });

  it('are 401 twenty times a minute per address, then 429 with Retry-After; a correctly signed reply still goes through', async () => {
    const { deploymentId, secret } = await deploy(service, { hook_url: customer.hookUrl });
    const widget = await Widget.open(service, deploymentId);
    const { conversation_id } = await widget.hello(await mintToken(secret, deploymentId));
    widget.send({ type: 'user_turn', client_turn_id: 'a', text: 'Spa?', mode: 'text' });
    const { turn_id } = await widget.next('turn_acknowledged');
    const reply = { conversation_id, turn_id, reply_text: 'Open until ten.' };

    const statuses: number[] = [];
    for (let i = 0; i < 21; i++)
      statuses.push(
        (
          await postReply(service, deploymentId, reply, secret, {
            signature: sign(`whsec_guess${i}`, JSON.stringify(reply)),
          })
        ).status,
      );
    expect(statuses).toEqual([...Array(20).fill(401), 429]);
    const limited = await fetch(`${service.url}/embed/concierge/${deploymentId}/replies`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-signature': 'sha256=' + '0'.repeat(64) },
      body: JSON.stringify(reply),
    });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(50);
    expect(((await limited.json()) as { error: { code: string } }).error.code).toBe('rate_limited');

    expect((await postReply(service, deploymentId, reply, secret)).status).toBe(202);
    expect(await widget.next('reply')).toMatchObject({ turn_id, text: 'Open until ten.' });
    widget.close();
  });
});
