import { complete, send, startModelServer, streamOf } from '../server/test/model-server.js';
import { audit, choosePassword, consoleErrors, managementApi } from './console-kit.js';
import { conversation, expect, test } from './fixtures.js';

/**
 * Variables and guardrails (README, Variables and guardrails) in real Chromium: a customer writes a
 * greeting with the visitor's name and the token's room, a blocked term and topics on the agent's
 * page, plays a visitor in Try it with those values, and sees the sentence the guardrail stopped
 * on the timeline, with why, while the widget showed only what passed.
 */
test('a customer sets variables and guardrails on an agent, and Try it greets by name and stops a blocked sentence', async ({
  page,
  stack,
}) => {
  test.setTimeout(60_000);
  const model = await startModelServer((call, res) =>
    call.body.stream
      ? send(
          res,
          streamOf(
            call.body.model,
            'Breakfast is from 7 to 10. The spa opens at 9. The Grand Hotel next door is cheaper, though.',
          ),
          5,
        )
      : complete(res, call.body.model, '{"broken":[]}'),
  );
  const errors = consoleErrors(page);
  const { apiKey, welcomeToken } = stack.newConsoleCustomer('Pier Hotel', 'owner@pier-hotel.example');
  const call = managementApi(stack.serviceUrl, apiKey);
  try {
    const endpoint = await call('POST', '/api/v1/model-endpoints', { name: 'Pier model', base_url: model.baseUrl });
    const job = await call('POST', '/api/v1/agents', { name: 'Pier desk' });
    await expect.poll(async () => (await call('GET', job.polling_url)).status).toBe('succeeded');
    await call('PUT', `/api/v1/agents/${job.agent_id}`, {
      draft_spec: { responder: { type: 'model', endpoint_id: endpoint.id, model: 'pier-model' } },
    });

    await choosePassword(page, `${stack.serviceUrl}/console/#/welcome/${welcomeToken}`);
    await expect(page.getByRole('heading', { name: 'Getting started' })).toBeVisible();
    await page.goto(`${stack.serviceUrl}/console/#/agents/${job.agent_id}`);
    await page.getByLabel(/^Greeting/).fill('Hello {{visitor.name|there}}, welcome to room {{ctx.room}}.');
    const variables = page.getByRole('group', { name: 'Variables' });
    await expect(variables.getByRole('row', { name: /visitor\.name/ })).toContainText('there');
    await expect(variables.getByRole('row', { name: /ctx\.room/ })).toContainText("the user token's ctx (room)");
    const rails = page.getByRole('group', { name: 'Guardrails' });
    await rails.getByLabel(/^Blocked terms/).fill('Grand Hotel');
    await rails.getByLabel(/^Topics it talks about/).fill('the Pier Hotel and its rooms\nbreakfast and the spa');
    await rails.getByLabel(/^Custom criteria/).fill('block: swearing');
    await expect(rails.getByText('Line 1: write it as refuse, retry or hand_off')).toBeVisible();
    await rails.getByLabel(/^Custom criteria/).fill('retry: promises a discount');
    await audit(page, 'agent-guardrails');
    await page.screenshot({ path: 'test-results/console/agent-guardrails.png', fullPage: true });
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('button', { name: 'Publish the draft' }).click();
    await expect(page.getByText('published', { exact: true }).first()).toBeVisible();
    const published = await call('GET', `/api/v1/agents/${job.agent_id}/spec`);
    expect(published.agent_spec.guardrails).toEqual({
      blocked_terms: ['Grand Hotel'],
      topics: { allowed: ['the Pier Hotel and its rooms', 'breakfast and the spa'] },
      custom: [{ action: 'retry', criterion: 'promises a discount' }],
    });

    const deployment = await call('POST', '/api/v1/deployments', { agent_id: job.agent_id, channel_config: {} });
    await call('POST', `/api/v1/deployments/${deployment.id}/activate`);
    await page.goto(`${stack.serviceUrl}/console/#/try/${deployment.id}`);
    // The widget opens first as the console's own preview visitor (it takes the focus as it opens).
    await expect(conversation(page).getByText('Hello Console preview, welcome to room .')).toBeVisible();
    const played = page.locator('form.variables-to-play');
    await played.getByLabel(/visitor\.name/).fill('Ada');
    await played.getByLabel(/ctx\.room/).fill('214');
    await expect(played.getByLabel(/visitor\.name/)).toHaveValue('Ada');
    await played.getByRole('button', { name: 'Start a conversation with these values' }).click();
    await expect(conversation(page).getByText('Hello Ada, welcome to room 214.')).toBeVisible();

    await page.getByRole('textbox', { name: 'Your message' }).fill('When is breakfast?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(
      conversation(page).getByText(
        "Breakfast is from 7 to 10. The spa opens at 9. I'm sorry, I can't help with that here.",
      ),
    ).toBeVisible({ timeout: 15_000 });
    const stopped = page.getByText(
      'Guardrail: a sentence was stopped, it said the blocked term “Grand Hotel”; replaced by the refusal: “The Grand Hotel next door is cheaper, though.”',
    );
    await expect(stopped).toBeVisible({ timeout: 10_000 });
    await expect(conversation(page).getByText(/Grand Hotel/)).toHaveCount(0);
    await audit(page, 'try-guardrail');
    await page.screenshot({ path: 'test-results/console/try-guardrail.png', fullPage: true });
    expect(errors).toEqual([]);
  } finally {
    await model.close();
  }
});
