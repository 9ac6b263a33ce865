import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { CLIENT, openIdProvider } from '../server/test/openid-provider.js';
import { freePort, startServiceProcess } from '../server/test/service-process.js';
import { audit, choosePassword, consoleErrors, nav, PASSWORD } from './console-kit.js';

/**
 * README, Your team: a console with single sign-on, in Chromium. A service of its own (the shared
 * stack signs in with passwords), configured for an OpenID Provider started here; its first owner
 * invites the front desk, who then signs in through the provider without ever choosing a password.
 */
test('single sign-on: the sign-in page offers the provider, an invited email signs in through it, anyone else is told why', async ({
  browser,
  page,
}) => {
  test.setTimeout(90_000);
  const errors = consoleErrors(page);
  const op = await openIdProvider();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  op.serve(`${base}/console/sso/callback`);
  op.state.people = {
    desk: { email: 'desk@harbor-sso.example', verified: true },
    stranger: { email: 'stranger@elsewhere.example', verified: true },
    owner: { email: 'owner@localhost', verified: true },
  };
  const dataDir = mkdtempSync(join(tmpdir(), 'concierge-e2e-sso-'));
  const service = await startServiceProcess({
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    DATABASE_URL: '',
    LOG_LEVEL: 'warn',
    PUBLIC_BASE_URL: base,
    OIDC_ISSUER: op.issuer,
    OIDC_CLIENT_ID: CLIENT.id,
    OIDC_CLIENT_SECRET: CLIENT.secret,
    OIDC_NAME: 'Harbor ID',
  });
  try {
    await expect.poll(() => /#\/welcome\/\S+/.exec(service.stdout())?.[0]).toBeTruthy();
    const welcome = /(http\S+#\/welcome\/\S+)/.exec(service.stdout())![1]!;
    await choosePassword(page, welcome);
    // The owner turns single sign-on on for the team's domains (off until then), and links the
    // provider to their own account, which signed in with its password.
    await nav(page, 'Users').click();
    await expect(page.getByRole('heading', { name: 'Single sign-on with Harbor ID' })).toBeVisible();
    await page.getByLabel('Email domains').fill('harbor-sso.example, localhost');
    await page.getByRole('button', { name: 'Turn on' }).click();
    await expect(page.getByText(/^On for harbor-sso\.example, localhost:/)).toBeVisible();
    await audit(page, 'users-single-sign-on');
    await page.getByLabel('Email', { exact: true }).fill('desk@harbor-sso.example');
    await page.getByLabel(/^Their role/).selectOption('agent');
    await page.getByRole('button', { name: 'Invite' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Invitation link for desk@' })).toBeVisible();
    await page.getByRole('button', { name: 'Sign out' }).click();

    // The front desk: no password, only the provider.
    await expect(page.getByRole('heading', { name: 'Sign in to Concierge' })).toBeVisible();
    const button = page.getByRole('link', { name: 'Sign in with Harbor ID' });
    await expect(button).toBeVisible();
    await audit(page, 'sign-in-sso');
    op.state.signIn = 'desk';
    await button.click();
    await expect(page.getByRole('heading', { name: 'Inbox' })).toBeVisible();
    await expect(page.getByText('desk@harbor-sso.example (agent)')).toBeVisible();

    // Someone else, in a browser of their own, whom the provider knows but no team has invited: back
    // to the sign-in page, told why.
    const stranger = await (await browser.newContext()).newPage();
    op.state.signIn = 'stranger';
    await stranger.goto(`${base}/console/`);
    await stranger.getByRole('link', { name: 'Sign in with Harbor ID' }).click();
    await expect(stranger.getByRole('alert')).toHaveText(
      /That account is in no team here that signs in with it\. Ask an admin/,
    );
    expect(stranger.url()).toBe(`${base}/console/#/sign-in/not_invited`);
    await audit(stranger, 'sign-in-sso-refused');
    await stranger.context().close();

    // The owner, signed in with their password in a browser of their own, links the provider: it
    // signs them in from then on.
    const owner = await (await browser.newContext()).newPage();
    await owner.goto(`${base}/console/`);
    await owner.getByLabel('Email').fill('owner@localhost');
    await owner.getByLabel('Password').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Sign in', exact: true }).click();
    op.state.signIn = 'owner';
    await owner.getByRole('link', { name: 'Link Harbor ID' }).click();
    await expect(owner.getByText('owner@localhost (owner)')).toBeVisible();
    await expect(owner.getByRole('link', { name: 'Link Harbor ID' })).toHaveCount(0);
    await owner.getByRole('button', { name: 'Sign out' }).click();
    await owner.getByRole('link', { name: 'Sign in with Harbor ID' }).click();
    await expect(owner.getByText('owner@localhost (owner)')).toBeVisible();
    await owner.context().close();
    expect(errors).toEqual([]);
  } finally {
    service.child.kill('SIGTERM');
    await service.exited;
    await op.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
