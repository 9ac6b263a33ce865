import { expect, it } from 'vitest';
import { deploy, mintToken, serviceWithCustomer, Widget } from '../../test/concierge-kit.js';
import { describeEachStore, type StoreKind } from '../../test/harness.js';
import { auditOf } from '../audit/audit-trail.js';

function suite(kind: StoreKind) {
  const { service, customer } = serviceWithCustomer(kind);

  it('ends the open conversations of a deployment deactivated without the API: the service announces its own changes', async () => {
    const { deploymentId, secret } = await deploy(service(), { hook_url: customer().hookUrl });
    const widget = await Widget.open(service(), deploymentId);
    await widget.hello(await mintToken(secret, deploymentId));
    const { customer_id } = await service()
      .app.store.db.selectFrom('deployments')
      .select('customer_id')
      .where('id', '=', deploymentId)
      .executeTakeFirstOrThrow();

    const deactivated = await service().app.deployments.deactivate(
      customer_id,
      deploymentId,
      auditOf(customer_id, 'admin'),
    );

    expect(deactivated.status).toBe('inactive');
    expect(await widget.next('conversation_ended')).toMatchObject({ seq: 1, reason: 'deployment_inactive' });
    expect((await widget.closed).code).toBe(4410);
  });
}

describeEachStore('the deployment service', suite);
