import { expect, it } from 'vitest';
import { deployAgent, serviceWithModel } from '../../test/concierge-kit.js';
import { member } from '../../test/console-users.js';
import { call, client, describeEachStore, type StoreKind } from '../../test/harness.js';
import { writes } from '../../test/model-server.js';

describeEachStore('what the agent role reads (README, Your team)', (kind: StoreKind) => {
  const suite = serviceWithModel(kind, writes('We open at seven.'));

  it("sees the URLs the service calls as their origins, no agent's spec and no model call's request body; an editor sees them whole", async () => {
    const [service, model] = [suite.service(), suite.model()];
    const { apiKey, customerId } = await service.newCustomer('Hotel');
    const api = client(service.url, apiKey);
    const endpoint = await api.post('/api/v1/model-endpoints', { name: 'M', base_url: model.baseUrl });
    const toolUrl = 'https://tools.hotel.example/book?key=tool-secret-1';
    const agent = await deployAgent(service, api, {
      instructions: 'The staff discount code is STAFF-42.',
      responder: {
        type: 'model',
        endpoint_id: endpoint.body.data.id,
        model: 'm',
        tools: [{ name: 'book', description: 'Books', parameters: { type: 'object' }, url: toolUrl }],
      },
    });
    const hookUrl = 'https://hooks.hotel.example/turn?token=hook-secret-2';
    await api.put(`/api/v1/deployments/${agent.deploymentId}`, {
      channel_config: { hook_url: hookUrl, transcript_hook_url: `${hookUrl}&events=1` },
    });
    const { widget, conversationId } = await agent.visitor();
    widget.send({ type: 'user_turn', client_turn_id: 'c1', text: 'When do you open?', mode: 'text' });
    await widget.next('reply');

    const desk = await member(service, customerId, `desk@${kind}.example`, 'agent');
    const editor = await member(service, customerId, `editor@${kind}.example`, 'editor');
    const read = async (headers: Record<string, string>) => {
      const get = async (path: string) => (await call(service.url, 'GET', path, { headers })).body;
      return JSON.stringify([
        await get(`/api/v1/deployments/${agent.deploymentId}`),
        await get('/api/v1/deployments'),
        await get(`/api/v1/agents/${agent.agentId}`),
        await get('/api/v1/agents'),
        await get(`/api/v1/deliveries?conversation_id=${conversationId}`),
        await get(`/api/v1/conversations/${conversationId}`),
        await (await fetch(`${service.url}/api/v1/conversations/export`, { headers })).text(),
      ]);
    };
    const seenByDesk = await read(desk.headers);
    for (const secret of ['hook-secret-2', 'tool-secret-1', 'STAFF-42'])
      expect(seenByDesk.includes(secret), secret).toBe(false);
    expect(seenByDesk).toContain('https://hooks.hotel.example/…');
    expect(seenByDesk).toContain('(not shown to the agent role)');
    // An agent's specs (its instructions, its tools' URLs) are not the agent role's to read.
    const agentAsDesk = (await call(service.url, 'GET', `/api/v1/agents/${agent.agentId}`, { headers: desk.headers }))
      .body.data;
    expect(agentAsDesk.agent_spec).toBeNull();
    const seenByEditor = await read(editor.headers);
    for (const secret of ['hook-secret-2', 'tool-secret-1', 'STAFF-42']) expect(seenByEditor).toContain(secret);
    widget.close();
  });
});
