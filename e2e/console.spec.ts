import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from '@playwright/test';
import WebSocket from 'ws';
import { audit, consoleErrors, nav, PASSWORD } from './console-kit.js';
import { test } from './fixtures.js';

/** A customer's server of its own: answers each turn 202, then posts the signed reply; takes transcript events. */
async function customerServer() {
  const state = { secret: '', hooks: 0, transcript: [] as string[] };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      if (req.url === '/transcript') {
        state.transcript.push(raw);
        return void res.writeHead(200).end();
      }
      state.hooks++;
      const call = JSON.parse(raw) as { test?: boolean; turn_id: string; conversation_id: string; reply_url: string };
      res.writeHead(202).end();
      if (call.test) return;
      const body = JSON.stringify({
        conversation_id: call.conversation_id,
        turn_id: call.turn_id,
        reply_text: 'Breakfast is served from 7 to 10.',
      });
      const signature = `sha256=${createHmac('sha256', state.secret).update(body).digest('hex')}`;
      void fetch(call.reply_url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-service-signature': signature },
        body,
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    state,
    hookUrl: `${base}/hook`,
    transcriptUrl: `${base}/transcript`,
    close: () => new Promise((r) => server.close(r)),
  };
}

test('a new customer walks the whole path in the console, under its CSP, without a console error', async ({
  page,
  stack,
}) => {
  test.setTimeout(120_000);
  const customer = await customerServer();
  const errors = consoleErrors(page);
  const { welcomeToken } = stack.newConsoleCustomer('Seaside Inn', 'owner@seaside.example');
  try {
    const response = await page.goto(`${stack.serviceUrl}/console/#/welcome/${welcomeToken}`);
    expect(response?.headers()['content-security-policy']).toBe(
      "default-src 'self'; media-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    );
    await expect(page.getByRole('heading', { name: 'Welcome to Concierge' })).toBeVisible();
    // Reported, not asserted: from navigation start to the first page's form ready for input.
    const interactiveMs = await page.evaluate(() => Math.round(performance.now()));
    process.stdout.write(`console: first page interactive ${interactiveMs} ms after navigation (loopback)\n`);
    await audit(page, 'welcome');
    await page.getByLabel('Password (at least 12 characters)').fill(PASSWORD);
    await page.getByLabel('The same password again').fill(PASSWORD);
    await page.getByRole('button', { name: 'Set password and sign in' }).click();
    await expect(page.getByRole('heading', { name: 'Getting started' })).toBeVisible();
    expect(page.url()).not.toContain(welcomeToken);
    await expect(page.getByRole('listitem').filter({ hasText: 'Create an agent' })).toContainText('(next step)');
    await audit(page, 'getting-started');

    // An agent, generated, edited and published.
    await nav(page, 'Agents').click();
    await expect(page.getByText('No agent yet')).toBeVisible();
    await audit(page, 'agents');
    await page.getByLabel('Name').fill('Seaside desk');
    await page.getByLabel(/^Description/).fill('Front desk of a small seaside inn');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await expect(page.getByRole('status')).toContainText('Generation succeeded');
    await page.getByRole('link', { name: 'Seaside desk' }).click();
    // A greeting per language: the voice sample says the one in the agent's language.
    await page
      .getByLabel(/^Greeting/)
      .fill('en: Hello, I am the Seaside Inn concierge.\nde: Hallo, hier ist der Concierge des Seaside Inn.');
    await expect(page.getByLabel('Draft as JSON')).toHaveValue(
      /"de": "Hallo, hier ist der Concierge des Seaside Inn."/,
    );
    // The agent's own voice: an id on the service's speech server, and a word said differently, heard before saving.
    await page.getByLabel(/^Service voice \(/).fill('bf_emma');
    await page.getByLabel(/^Pronunciations/).fill('Seaside = See-side\nInn = Inne [de]');
    const sampled = stack.synthesiser.calls.length;
    await page.getByRole('button', { name: 'Hear the voice' }).click();
    await expect(page.getByLabel("The agent's voice")).toBeVisible();
    expect(stack.synthesiser.calls.slice(sampled).map((c) => [c.body.voice, c.body.input])).toEqual([
      ['bf_emma', 'Hello, I am the See-side Inn concierge.'],
    ]);
    await audit(page, 'agent-voice');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByRole('button', { name: 'Publish the draft' }).click();
    await expect(page.getByText('published', { exact: true }).first()).toBeVisible();
    await audit(page, 'agent');

    // The new deployment's agent select names an agent from the first look, never a blank.
    await nav(page, 'Deployments').click();
    await expect(page.getByRole('combobox', { name: 'Agent', exact: true })).toHaveValue(/^[0-9a-f-]{36}$/);
    await page.goBack();

    // A deployment pointing at the customer's server, tested, configured and activated.
    await page.getByRole('link', { name: 'Deploy it' }).click();
    await audit(page, 'deployments');
    await page.getByLabel(/^Your hook URL/).fill(customer.hookUrl);
    await page.getByRole('button', { name: 'Create deployment' }).click();
    const secret = (await page.locator('.secret code').textContent())!;
    expect(secret).toMatch(/^whsec_/);
    // The copy button puts exactly the secret on the clipboard, and says so.
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.serviceUrl });
    await page.locator('.secret').getByRole('button', { name: 'Copy' }).click();
    await expect(page.locator('.secret').getByRole('button', { name: 'Copied' })).toBeVisible();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    customer.state.secret = secret;
    await page.getByRole('link', { name: 'Open the new deployment' }).click();
    await expect(page.getByText(/The list is empty/)).toBeVisible();
    // A private address is refused, and the test hook says which setting would allow it.
    await page.getByLabel(/^Transcript hook URL/).fill('http://10.20.30.40/transcript');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByLabel('Target').selectOption('transcript');
    await page.getByRole('button', { name: 'Send test hook' }).click();
    await expect(page.locator('.delivery').first()).toContainText('egress_refused');
    await expect(page.locator('.delivery .error-detail')).toHaveText(
      /^10\.20\.30\.40 is not a public address; the service calls only public addresses unless its operator allows this one in HOOK_ALLOWED_HOSTS: hooks@10\.20\.30\.40:80 \(every customer's hooks, transcript targets and tools\) or [0-9a-f-]{36}@10\.20\.30\.40:80 \(this customer's alone\)$/,
    );
    await audit(page, 'test hook refused');
    await page.getByLabel('Target').selectOption('hook');
    await page.getByLabel(/^Transcript hook URL/).fill(customer.transcriptUrl);
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByRole('button', { name: 'Send test hook' }).click();
    await expect(page.getByText('The signed string (webhook-id.webhook-timestamp.body)')).toBeVisible();
    await expect(page.locator('.delivery').first()).toContainText('succeeded');
    await expect(page.locator('.delivery').first()).toContainText('turn.created');
    await page.getByRole('button', { name: 'Activate' }).click();
    await expect(page.getByRole('button', { name: 'Deactivate' })).toBeVisible();
    await audit(page, 'deployment');

    // The widget's language menu, and a preview of its words in Japanese.
    const languages = page.getByLabel(/^Languages in the widget's menu/);
    await languages.fill('en-US\nja-JP\nen_GB');
    await expect(page.getByText('en_GB is not a language tag such as de-DE or en-GB')).toBeVisible();
    await languages.fill('en-US\nja-JP');
    // Where the visitors' speech is recognised: the browser's only, for this deployment.
    await page.getByLabel('Speech recognition').selectOption('browser');
    await page.getByLabel("The agent's voice").selectOption('service');
    const saved = page.waitForResponse(
      (res) => res.request().method() === 'PUT' && res.url().includes('/api/v1/deployments/'),
    );
    await page.getByRole('button', { name: 'Save settings' }).click();
    const savedBody = (await (await saved).json()) as { data: { runtime_config: Record<string, unknown> } };
    expect([
      (await saved).status(),
      savedBody.data.runtime_config.speech_recognition,
      savedBody.data.runtime_config.speech_synthesis,
    ]).toEqual([200, 'browser', 'service']);
    await page.getByLabel("Preview the widget's words in").selectOption('ja');
    await page.getByRole('link', { name: 'Open the preview in Try it' }).click();
    await expect(page.getByRole('textbox', { name: 'メッセージ' })).toHaveAttribute('placeholder', '質問を入力…');
    await expect(page.getByRole('combobox', { name: '言語' })).toHaveValue('en-US');
    await expect(page.getByLabel("Widget's words")).toHaveValue('ja');
    await audit(page, 'try-it-japanese');
    await page.goBack();
    // The widget belongs to Try it: leaving the page takes it away.
    await expect(page.locator('[data-concierge]')).toHaveCount(0);

    // Try it: the real widget, a text turn answered by the customer's server, the timeline beside it.
    await page.getByRole('main').getByRole('link', { name: 'Try it', exact: true }).click();
    await page.getByRole('textbox', { name: 'Your message' }).fill('Is breakfast included?');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect(page.getByText('Breakfast is served from 7 to 10.').first()).toBeVisible();
    await expect(page.locator('.timeline').first()).toContainText('Hook attempt 1: 202');
    await expect(page.locator('.timeline').first()).toContainText('Reply received');
    await audit(page, 'try-it');

    // The conversation's timeline, and a transcript event sent again.
    await nav(page, 'Conversations').click();
    await expect(page.locator('[data-concierge]')).toHaveCount(0);
    await page.getByRole('link', { name: 'Console preview' }).first().click();
    await expect(page.locator('.timeline').first()).toContainText('Visitor (text, en-US): Is breakfast included?');
    await expect(page.locator('.timeline').first()).toContainText('Hook attempt 1: 202');
    const before = customer.state.transcript.length;
    expect(before).toBeGreaterThan(0);
    await page
      .getByRole('button', { name: /^Redeliver/ })
      .first()
      .click();
    await expect.poll(() => customer.state.transcript.length).toBe(before + 1);
    await audit(page, 'conversation');
    await nav(page, 'Conversations').click();
    await audit(page, 'conversations');

    // How it goes: that conversation in the analytics, each chart with its numbers as a table.
    await nav(page, 'Analytics').click();
    await expect(
      page.getByRole('img', { name: /^Turns and failed turns: Turns 1 at most, Failed 0 at most$/ }),
    ).toBeVisible();
    const today = new Date().toISOString().slice(0, 10);
    await expect(
      page.getByRole('table', { name: 'Turns and failed turns' }).getByRole('row', { name: new RegExp(today) }),
    ).toHaveText(`${today}10`);
    await expect(
      page.getByRole('table', { name: 'Conversations and visitors' }).getByRole('row', { name: new RegExp(today) }),
    ).toHaveText(`${today}11`);
    // Drawn by uPlot: UTC dates on the axis, and each day's numbers in the legend under the pointer.
    const turnsChart = page.locator('figure.chart').filter({ hasText: 'Turns and failed turns' });
    // Before any pointer, the legend reads the last day, not a row of dashes.
    await expect(turnsChart.locator('.u-legend .u-series').nth(1)).toContainText('Turns1');
    const plot = turnsChart.locator('.u-over');
    const box = (await plot.boundingBox())!;
    await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
    await expect(turnsChart.locator('.u-legend')).toContainText(today);
    await expect(turnsChart.locator('.u-legend .u-series').nth(1)).toContainText('Turns1');
    await page.screenshot({ path: 'test-results/console/analytics.png', fullPage: true });
    await audit(page, 'analytics');

    // Install diagnostics: the console's own origin opened both sessions (the Japanese preview, then Try it); a page elsewhere is refused, with the fix.
    await nav(page, 'Deployments').click();
    await page.getByRole('link', { name: 'Seaside desk' }).click();
    await expect(page.locator('.diagnostics')).toContainText(`${stack.serviceUrl}: 2 sessions`);
    await page.getByLabel(/^Allowed origins/).fill('https://seaside.example');
    const originsSaved = page.waitForResponse(
      (res) => res.request().method() === 'PUT' && res.url().includes('/api/v1/deployments/'),
    );
    await page.getByRole('button', { name: 'Save settings' }).click();
    expect((await originsSaved).status()).toBe(200);
    const deploymentId = /#\/deployments\/([0-9a-f-]+)/.exec(page.url())![1]!;
    // The customer's server, on the SDK this service serves, for this deployment.
    const server = page.locator('figure.code', { has: page.getByText('Your server (Node)') }).locator('pre');
    await expect(server).toContainText(`npm install ${stack.serviceUrl}/sdk/concierge-server.tgz`);
    await expect(server).toContainText(`deploymentId: '${deploymentId}'`);
    const refused = await new Promise<[number, string]>((resolve) => {
      const ws = new WebSocket(`${stack.serviceUrl.replace('http', 'ws')}/embed/concierge/${deploymentId}/ws`, {
        headers: { origin: 'https://copycat.example' },
      });
      ws.on('close', (code, reason) => resolve([code, String(reason)]));
    });
    expect(refused).toEqual([4403, 'origin_not_allowed']);
    await page.locator('.diagnostics').getByRole('button', { name: 'Refresh' }).click();
    await expect(page.locator('.diagnostics .refused')).toContainText('origin not allowed: 1 time');
    await expect(page.locator('.diagnostics .refused')).toContainText(
      'Pages on https://copycat.example are refused: add it to Allowed origins above if the widget belongs there.',
    );
    await audit(page, 'deployment-diagnostics');

    // The key, rotated: shown once.
    // The deployment page has a grace period of its own (the signing secret's): the key's page must be the one shown.
    await nav(page, 'API key').click();
    await expect(page.getByRole('heading', { level: 1, name: 'API key' })).toBeVisible();
    await page.getByLabel('Grace period').selectOption('3600');
    await page.getByRole('button', { name: 'Rotate key' }).click();
    await expect(page.locator('.secret code')).toHaveText(/^vak_/);
    await audit(page, 'api-key');

    await nav(page, 'Getting started').click();
    await expect(page.getByText('All done: your concierge is live.')).toBeVisible();
    await page.getByRole('button', { name: 'curl' }).click();
    await expect(page.getByRole('complementary', { name: 'Requests as curl' })).toContainText(
      'Authorization: Bearer $CONCIERGE_API_KEY',
    );
    expect(errors).toEqual([]);
  } finally {
    await customer.close();
  }
});

test('a wrong password is refused with the code and message; the right one signs in', async ({ page, stack }) => {
  const { welcomeToken } = stack.newConsoleCustomer('Hillside Lodge', 'owner@hillside.example');
  await page.request.post(`${stack.serviceUrl}/console/welcome`, { data: { token: welcomeToken, password: PASSWORD } });
  await page.context().clearCookies();
  await page.goto(`${stack.serviceUrl}/console/`);
  await page.getByLabel('Email').fill('owner@hillside.example');
  await page.getByLabel('Password').fill('not the password at all');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toContainText('401 unauthorized Wrong email or password');
  await audit(page, 'sign-in');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Getting started' })).toBeVisible();
});

test('an expired session sends the console back to sign-in; the cookie without the console header is refused', async ({
  page,
  stack,
}) => {
  const { welcomeToken } = stack.newConsoleCustomer('Lakeside Hotel', 'owner@lakeside.example');
  await page.goto(`${stack.serviceUrl}/console/#/welcome/${welcomeToken}`);
  await page.getByLabel('Password (at least 12 characters)').fill(PASSWORD);
  await page.getByLabel('The same password again').fill(PASSWORD);
  await page.getByRole('button', { name: 'Set password and sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Getting started' })).toBeVisible();

  // The browser's cookie is sent, but a request without the console's header is not the console's.
  const bare = await page.request.get(`${stack.serviceUrl}/api/v1/agents`);
  expect(bare.status()).toBe(401);
  const withHeader = await page.request.get(`${stack.serviceUrl}/api/v1/agents`, {
    headers: { 'X-Requested-With': 'concierge-console' },
  });
  expect(withHeader.status()).toBe(200);

  // The session expires while the page is open: the next page asks to sign in again, and the cookie the browser still holds opens nothing.
  const cookie = (await page.context().cookies()).find((c) => c.name === 'concierge_session')!;
  expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/' });
  stack.expireConsoleSessions();
  // The next page, asked for as the Agents link would: by then the console may already have found out
  // on its own (its live updates are refused) and left the sections for sign-in, so nothing is clicked.
  await page.evaluate(() => (location.hash = '#/agents'));
  await expect(page.getByRole('heading', { name: 'Sign in to Concierge' })).toBeVisible();
  expect(
    (
      await page.request.get(`${stack.serviceUrl}/api/v1/agents`, {
        headers: { 'X-Requested-With': 'concierge-console' },
      })
    ).status(),
  ).toBe(401);
});

test('a deployment whose transcript target went away says so, and Enable again resumes it', async ({ page, stack }) => {
  const { apiKey, welcomeToken } = stack.newConsoleCustomer('Riverside Hotel', 'owner@riverside.example');
  const headers = { authorization: `Bearer ${apiKey}` };
  const agent = await (
    await page.request.post(`${stack.serviceUrl}/api/v1/agents`, { headers, data: { name: 'Front desk' } })
  ).json();
  const created = await page.request.post(`${stack.serviceUrl}/api/v1/deployments`, {
    headers,
    data: {
      agent_id: agent.data.agent_id,
      channel_config: {
        hook_url: 'https://hooks.riverside.example/turn',
        transcript_hook_url: 'https://hooks.riverside.example/events',
      },
    },
  });
  const deploymentId = (await created.json()).data.id as string;
  stack.disableTranscriptTarget(deploymentId, '410 Gone from https://hooks.riverside.example/events');
  await page.request.post(`${stack.serviceUrl}/console/welcome`, { data: { token: welcomeToken, password: PASSWORD } });
  await page.goto(`${stack.serviceUrl}/console/#/deployments/${deploymentId}`);
  const notice = page.getByRole('status').filter({ hasText: 'Transcript events are paused' });
  await expect(notice).toContainText('410 Gone from https://hooks.riverside.example/events');
  await audit(page, 'deployment with a disabled transcript target');
  await notice.getByRole('button', { name: 'Enable again' }).click();
  await expect(notice).toHaveCount(0);
  const after = await (
    await page.request.get(`${stack.serviceUrl}/api/v1/deployments/${deploymentId}`, { headers })
  ).json();
  expect(after.data).toMatchObject({ transcript_hook_status: 'active', transcript_hook_disabled_reason: null });
});

test('a crafted link names no other route: it shows Not found and sends nothing', async ({ page, stack }) => {
  const { apiKey, welcomeToken } = stack.newConsoleCustomer('Harbourfront Hotel', 'owner@harbourfront.example');
  const headers = { authorization: `Bearer ${apiKey}` };
  const agent = await (
    await page.request.post(`${stack.serviceUrl}/api/v1/agents`, { headers, data: { name: 'Front desk' } })
  ).json();
  const created = await page.request.post(`${stack.serviceUrl}/api/v1/deployments`, {
    headers,
    data: { agent_id: agent.data.agent_id, channel_config: { hook_url: 'https://hooks.harbourfront.example/turn' } },
  });
  const deploymentId = (await created.json()).data.id as string;
  const before = await (
    await page.request.get(`${stack.serviceUrl}/api/v1/deployments/${deploymentId}`, { headers })
  ).json();
  await page.request.post(`${stack.serviceUrl}/console/welcome`, { data: { token: welcomeToken, password: PASSWORD } });

  const sent: string[] = [];
  page.on('request', (r) => {
    if (new URL(r.url()).pathname.startsWith('/api/'))
      sent.push(`${r.method()} ${new URL(r.url()).pathname}${new URL(r.url()).search}`);
  });
  const crafted = [
    '#/try/..%2Fsettings%2Fapi-key%2Frotate%3F',
    '#/try/..%2F..%2Fsettings%2Fapi-key%2Frotate%3Fx%3D',
    `#/deployments/${deploymentId}%2Fdeactivate%3F`,
    `#/deployments/..%2Fdeployments%2F${deploymentId}%2Frotate-secret%3F`,
    '#/agents/..%2Fsettings%2Fapi-key%2Frotate%3F',
    '#/conversations/..%2F..%2Fsettings%2Fapi-key%2Frotate%3F',
    '#/inbox/..%2F..%2Fsettings%2Fapi-key%2Frotate%3F',
    `#/try/${deploymentId}/..%2F..%2Fsettings`,
  ];
  for (const hash of crafted) {
    await page.goto(`${stack.serviceUrl}/console/${hash}`);
    await expect(page.getByRole('heading', { name: 'Not found' }), hash).toBeVisible();
  }
  await audit(page, 'not found after a crafted link');
  // Wait past the widget's first retry: nothing but the session check may have been asked for.
  await page.waitForTimeout(1500);
  expect(
    sent.filter((s) => !s.startsWith('GET ')),
    sent.join('\n'),
  ).toEqual([]);
  expect(sent.filter((s) => /rotate|deactivate|preview-token|settings/.test(s))).toEqual([]);
  // The key still opens the API, and the deployment is as it was, its secret not rotated.
  const after = await page.request.get(`${stack.serviceUrl}/api/v1/deployments/${deploymentId}`, { headers });
  expect(after.status()).toBe(200);
  expect((await after.json()).data).toEqual(before.data);
});
