import { readFileSync } from 'node:fs';
import { expect, type Browser, type Page } from '@playwright/test';
import { audit, choosePassword, consoleErrors, nav } from './console-kit.js';
import { test } from './fixtures.js';

/**
 * Opens a one-time link in a browser of its own (another person's), chooses the password: signed
 * in. The link is followed as it was given: it names the service as the console does.
 */
async function welcomed(browser: Browser, link: string): Promise<{ page: Page; errors: string[] }> {
  const page = await (await browser.newContext()).newPage();
  const errors = consoleErrors(page);
  await choosePassword(page, link);
  return { page, errors };
}

const sections = (page: Page) => page.getByRole('navigation', { name: 'Sections' }).getByRole('link').allTextContents();

/** README, Your team: an owner invites a team, each role sees what it may use, a change counts at once. */
test('a team in one console: invitations, each role offered only what it may use, roles changed and people removed at once, the audit log', async ({
  browser,
  page,
  stack,
}) => {
  test.setTimeout(120_000);
  const errors = consoleErrors(page);
  const { welcomeToken } = stack.newConsoleCustomer('Team Inn', 'owner@team-inn.example');
  await choosePassword(page, `${stack.serviceUrl}/console/#/welcome/${welcomeToken}`);
  await expect(page.getByRole('heading', { name: 'Getting started' })).toBeVisible();
  expect(await sections(page)).toContain('Users');
  expect(await sections(page)).toContain('Audit log');

  // The owner invites three people, one per role below theirs; each link is shown once.
  await nav(page, 'Users').click();
  await expect(page.getByRole('heading', { name: 'Users' })).toBeVisible();
  const links: Record<string, string> = {};
  for (const [email, role] of [
    ['desk@team-inn.example', 'agent'],
    ['builder@team-inn.example', 'editor'],
    ['admin@team-inn.example', 'admin'],
  ] as const) {
    await page.getByLabel('Email').fill(email);
    await page.getByLabel(/^Their role/).selectOption(role);
    await page.getByRole('button', { name: 'Invite' }).click();
    const shown = page.getByRole('status').filter({ hasText: `Invitation link for ${email}` });
    await expect(shown).toBeVisible();
    links[role] = (await shown.locator('code').textContent())!;
    expect(links[role]).toMatch(/\/console\/#\/welcome\/[\w-]{43}$/);
  }
  await expect(page.getByRole('row', { name: /desk@team-inn\.example/ })).toContainText('invited, link until');
  // The only owner keeps the role: their own row offers neither a role nor Remove.
  const ownRow = page.getByRole('row', { name: /owner@team-inn\.example/ });
  await expect(ownRow).toContainText('owner (the only one)');
  await expect(ownRow.getByRole('button', { name: /Remove/ })).toHaveCount(0);
  await expect(ownRow.getByRole('combobox')).toHaveCount(0);
  await audit(page, 'users');

  // The agent answers visitors: it lands on the Inbox and is offered nothing else but Conversations and Analytics.
  const desk = await welcomed(browser, links.agent!);
  await expect(desk.page.getByRole('heading', { name: 'Inbox' })).toBeVisible();
  expect(await sections(desk.page)).toEqual(['Inbox', 'Conversations', 'Analytics']);
  await audit(desk.page, 'agent-inbox');
  await nav(desk.page, 'Analytics').click();
  await expect(desk.page.getByRole('heading', { name: 'Analytics' })).toBeVisible();
  await desk.page.goto(`${stack.serviceUrl}/console/#/agents`);
  await expect(desk.page.getByRole('heading', { name: 'Not for your role' })).toBeVisible();
  await expect(desk.page.getByText('This page needs the editor role or above; you are an agent.')).toBeVisible();
  await audit(desk.page, 'agent-not-for-role');

  // The editor builds, but holds neither the key nor the team.
  const builder = await welcomed(browser, links.editor!);
  await expect(builder.page.getByRole('heading', { name: 'Getting started' })).toBeVisible();
  expect(await sections(builder.page)).toEqual([
    'Getting started',
    'Agents',
    'Deployments',
    'Model endpoints',
    'Knowledge',
    'Try it',
    'Inbox',
    'Conversations',
    'Analytics',
  ]);
  await audit(builder.page, 'editor-start');

  // The admin holds the team, but not its owner: no role to change, no remove button on the owner's row.
  const admin = await welcomed(browser, links.admin!);
  await nav(admin.page, 'Users').click();
  const ownerRow = admin.page.getByRole('row', { name: /owner@team-inn\.example/ });
  await expect(ownerRow).toContainText('owner');
  await expect(ownerRow.getByRole('button', { name: /Remove/ })).toHaveCount(0);
  await expect(ownerRow.getByRole('combobox')).toHaveCount(0);
  expect(
    await admin.page
      .getByLabel(/^Their role/)
      .locator('option')
      .allTextContents(),
  ).toEqual([expect.stringMatching(/^agent: /), expect.stringMatching(/^editor: /), expect.stringMatching(/^admin: /)]);
  await audit(admin.page, 'admin-users');

  // A role changed counts at the agent's next page; a person removed is signed out at once.
  await page.getByLabel('Role of desk@team-inn.example').selectOption('editor');
  await expect(page.getByLabel('Role of desk@team-inn.example')).toHaveValue('editor');
  await desk.page.goto(`${stack.serviceUrl}/console/#/agents`);
  await desk.page.reload();
  await expect(desk.page.getByRole('heading', { name: 'Agents' })).toBeVisible();
  page.once('dialog', (d) => void d.accept());
  await page.getByRole('button', { name: 'Remove builder@team-inn.example' }).click();
  await expect(page.getByRole('row', { name: /builder@team-inn\.example/ })).toHaveCount(0);
  await nav(builder.page, 'Agents').click();
  await expect(builder.page.getByRole('heading', { name: 'Sign in to Concierge' })).toBeVisible();

  // Every change, by whom, is in the audit log, and it exports as NDJSON.
  await nav(page, 'Audit log').click();
  await expect(page.getByRole('heading', { name: 'Audit log' })).toBeVisible();
  // Said in words and names: the action, and whom it was about (one removed is no longer named).
  const rows = page.getByRole('row');
  await expect(rows.nth(1)).toContainText('User removed');
  await expect(rows.nth(1)).toContainText('owner@team-inn.example');
  await expect(rows.nth(1)).toContainText('user (since deleted or unnamed)');
  await expect(rows.nth(2)).toContainText('User role changed');
  await expect(rows.nth(2)).toContainText('desk@team-inn.example user');
  await expect(page.getByRole('cell', { name: 'Customer created' })).toBeVisible();
  await audit(page, 'audit-log');
  await page.getByLabel(/^Action/).fill('user.invited');
  // The owner's own invitation (by npm run admin) and the three above.
  await expect(rows).toHaveCount(5);
  const download = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export NDJSON' }).click();
  const saved = readFileSync((await (await download).path())!, 'utf8')
    .trimEnd()
    .split('\n');
  expect(saved.map((line) => JSON.parse(line).action)).toEqual(Array(4).fill('user.invited'));
  expect(saved.map((line) => JSON.parse(line).actor)).toEqual([
    ...Array(3).fill({ type: 'user', id: expect.any(String), email: 'owner@team-inn.example' }),
    { type: 'admin', id: null },
  ]);

  expect([...errors, ...desk.errors, ...admin.errors].filter((e) => !e.includes('403'))).toEqual([]);
  for (const person of [desk, builder, admin]) await person.page.context().close();
});
