import type { ServerResponse } from 'node:http';
import { send, startModelServer, streamOf } from '../server/test/model-server.js';
import { audit, consoleErrors, nav, PASSWORD } from './console-kit.js';
import { answeredByHotelServer, conversation, expect, launcher, scriptedSpeech, spoken, test } from './fixtures.js';
import type { Stack } from './stack.js';

/**
 * An agent without a server (README, An agent without a server) in real Chromium: the demo hotel's
 * agent switched to a model on a scripted OpenAI-compatible server from its QA panel, and a
 * customer setting one up in the console.
 */

const FIRST = 'Breakfast is served from 7 to 10:30 in the garden room. ';
const REST = 'Would you like a table by the window?';

/** A model that writes its first sentence at once and the rest only when the test lets it. */
async function heldModel() {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const model = await startModelServer((call, res: ServerResponse) => {
    // The first sentence at once (its stream left open), the rest once released.
    const first = streamOf(call.body.model, FIRST, { done: false });
    const rest = streamOf(call.body.model, REST).slice(1);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const event of first) res.write(event);
    void released.then(() => res.end(rest.join('')));
  });
  return { model, release };
}

/** A model endpoint of the demo's customer, through the management API: the QA panel offers it. */
async function addEndpoint(stack: Stack, baseUrl: string): Promise<void> {
  const created = await fetch(`${stack.serviceUrl}/api/v1/model-endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${stack.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Scripted model', base_url: baseUrl }),
  });
  expect(created.status).toBe(201);
}

test.afterEach(({ stack }) => answeredByHotelServer(stack));

test("Chromium: the QA panel switches the hotel's agent to a model, whose first sentence the visitor hears while it still writes", async ({
  page,
  stack,
}) => {
  const { model, release } = await heldModel();
  try {
    await addEndpoint(stack, model.baseUrl);
    await scriptedSpeech(page, { words: ['When is breakfast?'] });
    await page.goto(`${stack.demoUrl}/qa`);
    const answerer = page.getByRole('combobox', { name: 'Who answers' });
    await expect(answerer.getByRole('option', { name: /A model on Scripted model/ })).toHaveCount(1);
    await answerer.selectOption({ label: `A model on Scripted model (${model.baseUrl})` });
    await page.getByRole('textbox', { name: 'Model' }).fill('hotel-model');
    await page.getByRole('button', { name: 'Switch' }).click();
    await expect(page.locator('#qa-responder-applied')).toHaveText('Now: the model hotel-model');

    await launcher(page).click();
    await page.getByRole('button', { name: 'Speak' }).click();
    // The first sentence is shown and said while the model has not written the rest.
    await expect(conversation(page).getByText(FIRST.trim())).toBeVisible({ timeout: 10_000 });
    await expect.poll(async () => (await spoken(page)).map((s) => s.text)).toEqual([FIRST.trim()]);
    expect(model.calls).toHaveLength(1);
    expect(model.calls[0]!.body.model).toBe('hotel-model');
    expect(model.calls[0]!.body.messages.at(-1)).toEqual({ role: 'user', content: 'When is breakfast?' });
    expect(model.calls[0]!.body.messages[0]!.content).toContain('Harbor Hotel');
    release();
    await expect(conversation(page).getByText(REST)).toBeVisible();
    await expect.poll(async () => (await spoken(page)).map((s) => s.text)).toEqual([FIRST.trim(), REST]);
    await page.screenshot({ path: 'test-results/widget/model-agent.png' });
  } finally {
    release();
    await model.close();
  }
});

test('a customer adds a model endpoint, tests it, and sets an agent to answer with it, its calls in Try it', async ({
  page,
  stack,
}) => {
  test.setTimeout(90_000);
  const model = await startModelServer((call, res) => send(res, streamOf(call.body.model, 'Hello from the model.')));
  const errors = consoleErrors(page);
  const { welcomeToken } = stack.newConsoleCustomer('Lakeside Lodge', 'owner@lakeside-lodge.example');
  try {
    await page.goto(`${stack.serviceUrl}/console/#/welcome/${welcomeToken}`);
    await page.getByLabel('Password (at least 12 characters)').fill(PASSWORD);
    await page.getByLabel('The same password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await expect(page.getByRole('heading', { name: 'Getting started' })).toBeVisible();

    await nav(page, 'Model endpoints').click();
    await expect(page.getByText('No model endpoint yet')).toBeVisible();
    await page.getByLabel('Name').fill('Lodge model');
    await page.getByLabel('Base URL (…/v1)').fill(model.baseUrl);
    await page.getByLabel(/^API key/).fill('sk-lodge-secret-4321');
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    const row = page.getByRole('row').filter({ hasText: 'Lodge model' });
    await expect(row).toContainText('…4321');
    await row.getByRole('textbox', { name: 'Model to ask on Lodge model' }).fill('lodge-model');
    await row.getByRole('button', { name: 'Test' }).click();
    await expect(row.getByRole('status')).toContainText('“Hello from the model.”');
    expect(model.calls.at(-1)!.authorization).toBe('Bearer sk-lodge-secret-4321');
    await audit(page, 'model-endpoints');

    await nav(page, 'Agents').click();
    await page.getByLabel('Name').fill('Lodge desk');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await expect(page.getByRole('status')).toContainText('Generation succeeded');
    await page.getByRole('link', { name: 'Lodge desk' }).click();
    await page.getByLabel('Answers come from').selectOption('model');
    await page.getByLabel('Model endpoint').selectOption({ label: 'Lodge model' });
    await page.getByLabel('Model', { exact: true }).fill('lodge-model');
    await page.getByLabel(/^Instructions/).fill('You are the Lakeside Lodge concierge.\nDinner is at 7 pm.');
    await page.getByLabel(/^Tools your server runs/).fill('[{"name": "check room"}]');
    await expect(page.getByText('Tool 1 (check room): name must be 1 to 64 of a-z, A-Z, 0-9, _ and -')).toBeVisible();
    await page.getByLabel(/^Tools your server runs/).fill('');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('button', { name: 'Publish the draft' }).click();
    await expect(page.getByText('published', { exact: true }).first()).toBeVisible();
    // Nothing left to publish: deploying is the next step.
    await expect(page.getByRole('button', { name: 'Publish the draft' })).toBeDisabled();
    await expect(page.getByRole('link', { name: 'Deploy it' })).toHaveClass(/primary/);
    await expect(page.getByText('The saved draft is what version 1 published.')).toBeVisible();
    await audit(page, 'agent-model');

    // A deployment with no hook: the model answers, and Try it's timeline shows the model's call.
    await page.getByRole('link', { name: 'Deploy it' }).click();
    await page.getByRole('button', { name: 'Create deployment' }).click();
    // No hook comes to the customer's server: its secret only signs the visitors' tokens, and the console says so.
    await expect(page.locator('.secret')).toContainText(
      'Your agent answers on its own, so no hook comes to your server',
    );
    await page.getByRole('link', { name: 'Open the new deployment' }).click();
    await expect(page.getByRole('figure', { name: /^Your server \(Node\)/ })).not.toContainText('nodeHandler');
    await expect(page.getByRole('figure', { name: /^Your server \(Node\)/ })).toContainText('mintUserToken');
    await page.getByRole('button', { name: 'Activate' }).click();
    // Live, trying it is the next step; taking it off the site is not the primary button.
    await expect(page.getByRole('button', { name: 'Deactivate' })).toHaveClass(/danger/);
    await expect(page.getByRole('main').getByRole('link', { name: 'Try it', exact: true })).toHaveClass(/primary/);
    await page.getByRole('main').getByRole('link', { name: 'Try it', exact: true }).click();
    await page.getByRole('textbox', { name: 'Your message' }).fill('When is dinner?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(page.getByRole('list', { name: 'Conversation' }).getByText('Hello from the model.')).toBeVisible();
    expect(model.calls.at(-1)!.body.messages[0]!.content).toContain('Dinner is at 7 pm.');
    await expect(page.getByText(/Model lodge-model \(call 1\): 200 in \d+ ms, first token in \d+ ms/)).toBeVisible({
      timeout: 10_000,
    });
    await audit(page, 'try-model');
    expect(errors).toEqual([]);
  } finally {
    await model.close();
  }
});
