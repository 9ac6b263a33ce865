import { startModelServer } from '../server/test/model-server.js';
import { audit, choosePassword, consoleErrors, managementApi, nav } from './console-kit.js';
import { conversation, expect, test } from './fixtures.js';

/**
 * Privacy (README, Privacy: what is kept) in real Chromium: a customer choosing in a deployment's
 * settings to keep the words redacted, a visitor telling Try it their phone number, and the console
 * showing the conversation with `[phone]` where it was, saying why, and counting it on Analytics.
 */
test('a customer keeps the words redacted, and the console shows what was kept', async ({ page, stack }) => {
  test.setTimeout(60_000);
  const model = await startModelServer();
  const errors = consoleErrors(page);
  const { apiKey, welcomeToken } = stack.newConsoleCustomer('Quiet Inn', 'owner@quiet-inn.example');
  const call = managementApi(stack.serviceUrl, apiKey);
  try {
    const endpoint = await call('POST', '/api/v1/model-endpoints', { name: 'Inn model', base_url: model.baseUrl });
    const job = await call('POST', '/api/v1/agents', { name: 'Quiet desk' });
    await expect.poll(async () => (await call('GET', job.polling_url)).status).toBe('succeeded');
    await call('PUT', `/api/v1/agents/${job.agent_id}`, {
      draft_spec: { responder: { type: 'model', endpoint_id: endpoint.id, model: 'inn-model' } },
    });
    await call('POST', `/api/v1/agents/${job.agent_id}/publish`);
    const deployment = await call('POST', '/api/v1/deployments', { agent_id: job.agent_id, channel_config: {} });
    await call('POST', `/api/v1/deployments/${deployment.id}/activate`);

    await choosePassword(page, `${stack.serviceUrl}/console/#/welcome/${welcomeToken}`);
    await expect(page.getByRole('heading', { name: 'Getting started' })).toBeVisible();
    await page.goto(`${stack.serviceUrl}/console/#/deployments/${deployment.id}`);
    const privacy = page.getByRole('group', { name: 'Privacy: what is kept' });
    await expect(privacy.getByLabel('Keep')).toHaveValue('everything');
    await privacy.getByLabel('Keep').selectOption({ label: 'The words, with personal values replaced' });
    await expect(privacy.getByText('This applies to what is stored from then on')).toBeVisible();
    await privacy.getByLabel(/^IBANs/).uncheck();
    await audit(page, 'deployment-privacy');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect(privacy.getByText('This applies to what is stored from then on')).toBeHidden();
    expect((await call('GET', `/api/v1/deployments/${deployment.id}`)).runtime_config.privacy).toEqual({
      keep: 'redacted',
      redact: ['email', 'phone', 'card'],
    });

    // The visitor's own line shows as typed; what is stored has the number taken out.
    await page.goto(`${stack.serviceUrl}/console/#/try/${deployment.id}`);
    await page.getByRole('textbox', { name: 'Your message' }).fill('Please call me on +44 7911 123456 tonight');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(conversation(page).getByText('Please call me on +44 7911 123456 tonight')).toBeVisible();
    await expect(conversation(page).getByText('Breakfast is served from 7 to 10. Enjoy!')).toBeVisible({
      timeout: 15_000,
    });
    const [tried] = await call('GET', `/api/v1/conversations?agent_id=${job.agent_id}&preview=true&per_page=1`);
    await page.goto(`${stack.serviceUrl}/console/#/conversations/${tried.id}`);
    await expect(page.getByText('Visitor (text, en-US): Please call me on [phone] tonight')).toBeVisible();
    await expect(
      page.getByText(/replaces personal values before anything is stored \(privacy: redacted\)/),
    ).toBeVisible();
    await expect(page.getByText('+44 7911 123456')).toHaveCount(0);
    await audit(page, 'conversation-redacted');
    await page.screenshot({ path: 'test-results/console/conversation-redacted.png', fullPage: true });

    await nav(page, 'Analytics').click();
    await expect(page.getByText('Values redacted before storing')).toBeVisible();
    await expect(page.locator('dl.facts')).toContainText('1 phone');
    await nav(page, 'Audit log').click();
    await expect(page.getByRole('row', { name: /Deployment privacy changed/ })).toContainText(
      'keep before: everything · keep after: redacted · redact: email,phone,card',
    );
    expect(errors).toEqual([]);
  } finally {
    await model.close();
  }
});
