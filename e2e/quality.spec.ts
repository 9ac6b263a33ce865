import { startModelServer } from '../server/test/model-server.js';
import { scriptedEvaluator } from '../server/test/quality-model.js';
import { audit, consoleErrors, managementApi, nav, PASSWORD } from './console-kit.js';
import { answeredByHotelServer, conversation, expect, launcher, test } from './fixtures.js';
import type { Stack } from './stack.js';

/**
 * Tests and analysis (README, Tests and analysis) in real Chromium: the demo hotel's QA panel
 * showing what the analysis found of a conversation it ended, and a customer writing a test in the
 * console, running it, being stopped from publishing by a failing one, and reading a conversation's
 * analysis, making a test of it and comparing versions on Analytics.
 */

test.afterEach(({ stack }) => answeredByHotelServer(stack));

test("the QA panel ends the visitor's conversation and shows its analysis", async ({ page, stack }) => {
  await page.goto(`${stack.demoUrl}/qa`);
  await launcher(page).click();
  await page.getByRole('textbox', { name: 'Your message' }).fill('A table for dinner at 8 pm, please');
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(conversation(page).getByText(/is held in your name/)).toBeVisible({ timeout: 15_000 });
  await page.getByRole('button', { name: 'End the last conversation' }).click();
  await expect(page.locator('#qa-ended')).toHaveText('Ended: the analysis follows');
  const analysis = page.locator('#qa-analysis');
  await expect(analysis).toContainText('A table was held for them.', { timeout: 15_000 });
  await expect(analysis.locator('dl')).toContainText('booked_tablesuccess: The agent said the table is held.');
  await expect(analysis.locator('dl')).toContainText('party_size2');
  await expect(analysis.locator('dl')).toContainText('topicdining');
  await page.locator('#qa').screenshot({ path: 'test-results/widget/qa-analysis.png' });
});

/** A customer whose model agent books tables (the scripted model), deployed with no hook and live: through the API. */
async function bookingAgent(stack: Stack, apiKey: string, baseUrl: string) {
  const call = managementApi(stack.serviceUrl, apiKey);
  const endpoint = await call('POST', '/api/v1/model-endpoints', { name: 'Inn model', base_url: baseUrl });
  const job = await call('POST', '/api/v1/agents', { name: 'Inn desk' });
  await expect.poll(async () => (await call('GET', job.polling_url)).status).toBe('succeeded');
  await call('PUT', `/api/v1/agents/${job.agent_id}`, {
    draft_spec: {
      instructions: 'Book tables at the Seaside Inn.',
      responder: {
        type: 'model',
        endpoint_id: endpoint.id,
        model: 'inn-model',
        tools: [
          {
            name: 'book_table',
            description: 'Books a table',
            parameters: { type: 'object', properties: { party_size: { type: 'integer' }, time: { type: 'string' } } },
            url: 'https://inn.example/book',
          },
        ],
      },
      analysis: { summary: true, criteria: [{ id: 'booked_table', description: 'The visitor booked a table' }] },
    },
  });
  await call('POST', `/api/v1/agents/${job.agent_id}/publish`);
  const deployment = await call('POST', '/api/v1/deployments', { agent_id: job.agent_id, channel_config: {} });
  await call('POST', `/api/v1/deployments/${deployment.id}/activate`);
  return { agentId: job.agent_id as string, deploymentId: deployment.id as string, call };
}

test('a customer tests an agent before publishing, and reads what the analysis found after a conversation', async ({
  page,
  stack,
}) => {
  test.setTimeout(90_000);
  const model = await startModelServer();
  // Its analyst answers properly from the first ask.
  model.state.behaviour = scriptedEvaluator({ analyses: 1 });
  const errors = consoleErrors(page);
  const { apiKey, welcomeToken } = stack.newConsoleCustomer('Seaside Inn', 'owner@seaside-inn.example');
  try {
    const { agentId, deploymentId, call } = await bookingAgent(stack, apiKey, model.baseUrl);
    await page.goto(`${stack.serviceUrl}/console/#/welcome/${welcomeToken}`);
    await page.getByLabel('Password (at least 12 characters)').fill(PASSWORD);
    await page.getByLabel('The same password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await expect(page.getByRole('heading', { name: 'Getting started' })).toBeVisible();
    await nav(page, 'Agents').click();
    await page.getByRole('link', { name: 'Inn desk' }).click();

    // A test written in the console: the visitor's line, what the replies must do, the tool mocked.
    const tests = page.locator('#tests');
    await expect(tests.getByText('No tests yet.')).toBeVisible();
    await tests.getByRole('button', { name: 'Write a test' }).click();
    const form = tests.locator('.test-form');
    await form.getByLabel('Name', { exact: true }).fill('Books a table');
    await form.getByLabel("The visitor's lines").fill('Book a table for 4 please');
    await form.getByLabel(/^What the replies must do/).fill('says: booked\nbooks a table');
    await expect(form.getByText('Line 2 is not an expectation')).toBeVisible();
    await expect(form.getByRole('button', { name: 'Save the test' })).toBeDisabled();
    await form
      .getByLabel(/^What the replies must do/)
      .fill('says: booked\ncalls: book_table {"party_size": 4}\njudge: The agent is polite');
    await form.getByLabel(/^Mocked tools/).fill('{"book_table": {"ok": true, "table": 7}}');
    await form.getByRole('button', { name: 'Save the test' }).click();
    await expect(tests.getByText('1 turn · 3 expectations')).toBeVisible();
    await tests.getByRole('button', { name: 'Run the tests' }).click();
    const run = tests.locator('.test-run');
    await expect(run).toContainText('1 of 1 passed against the draft');
    await expect(run).toContainText('calls: book_table {"party_size":4}: book_table was called with those arguments');
    await expect(run).toContainText('judge: The agent is polite: The agent was polite.');
    await run.getByText('The conversation').click();
    await expect(run).toContainText('Agent: Your table for 4 is booked at 19:00. Enjoy your dinner!');
    await audit(page, 'agent-tests');

    // Publishing waits for the tests: a failing one stops it, the results shown.
    await page.getByLabel('Publish only when every test passes').check();
    await page.getByRole('button', { name: 'Save draft' }).click();
    await expect(page.getByRole('button', { name: 'Publish the draft' })).toBeEnabled();
    await tests.getByRole('button', { name: 'Write a test' }).click();
    await form.getByLabel('Name', { exact: true }).fill('Mentions pizza');
    await form.getByLabel("The visitor's lines").fill('What is on the menu?');
    await form.getByLabel(/^What the replies must do/).fill('says: pizza');
    await form.getByRole('button', { name: 'Save the test' }).click();
    await page.getByRole('button', { name: 'Publish the draft' }).click();
    await expect(
      page.getByText(
        '1 of 2 tests failed against the draft (see Tests below): the draft requires them to pass, so nothing was published.',
      ),
    ).toBeVisible({ timeout: 20_000 });
    await expect(run).toContainText('says: pizza: no reply says it');
    expect((await call('GET', `/api/v1/agents/${agentId}`)).version).toBe(1);

    // A conversation in Try it, closed by the team: its analysis on its page, and a test made of it.
    await page.goto(`${stack.serviceUrl}/console/#/try/${deploymentId}`);
    await page.getByRole('textbox', { name: 'Your message' }).fill('Book a table for 4 please');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(conversation(page).getByText('Your table for 4 is booked at 19:00. Enjoy your dinner!')).toBeVisible({
      timeout: 15_000,
    });
    const [tried] = await call('GET', `/api/v1/conversations?agent_id=${agentId}&preview=true&per_page=1`);
    await call('POST', `/api/v1/conversations/${tried.id}/close`);
    await page.goto(`${stack.serviceUrl}/console/#/conversations/${tried.id}`);
    const analysis = page.locator('section.analysis');
    await expect(analysis).toContainText('The visitor booked a table for four.', { timeout: 15_000 });
    await expect(analysis).toContainText('booked_table met: The table was booked.');
    await audit(page, 'conversation-analysis');
    await analysis.getByRole('button', { name: 'Make a test of this conversation' }).click();
    await expect(page.getByRole('heading', { name: 'Inn desk' })).toBeVisible();
    await expect(page.locator('#tests').getByText(/^Conversation of /)).toBeVisible();
    // The last run shows again on the agent's page.
    await expect(page.locator('#tests .test-run')).toContainText('1 of 2 passed against the draft');

    // Analytics: the criterion's success, per version.
    await nav(page, 'Analytics').click();
    const figures = page.getByRole('region', { name: 'Success by criterion and version' });
    await expect(figures.getByRole('row', { name: /booked_table v1 1 0 0 100%/ })).toBeVisible();
    await audit(page, 'analytics-criteria');
    expect(errors).toEqual([]);
  } finally {
    await model.close();
  }
});
