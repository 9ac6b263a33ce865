import type { Page } from '@playwright/test';
import { ask, askPending, conversation, expect, launcher, test } from './fixtures.js';

const RECONNECTING = 'Connection lost. Reconnecting…';

/** Every text the panel's status line shows, in order, sampled every 50 ms (some last half a second). */
async function recordStatuses(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { __statuses: string[] }).__statuses = seen;
    setInterval(() => {
      const text = document.querySelector('[data-concierge]')?.shadowRoot?.querySelector('.status')?.textContent ?? '';
      if (text && seen[seen.length - 1] !== text) seen.push(text);
    }, 50);
  });
}
const statuses = (page: Page) => page.evaluate(() => (window as unknown as { __statuses: string[] }).__statuses);

/** The question and its answer each appear once, and the hotel was asked once: one turn, answered once. */
async function answeredOnce(
  page: Page,
  stack: { hookCalls(text: string): Promise<number> },
  question: string,
  answer: RegExp,
): Promise<void> {
  await expect(conversation(page).getByText(answer)).toHaveCount(1);
  await expect(conversation(page).getByText(question, { exact: true })).toHaveCount(1);
  expect(await stack.hookCalls(question)).toBe(1);
  await expect(page.getByText('is thinking')).toBeHidden();
}

test('a reset connection: the panel says it is reconnecting, and the turn is answered once', async ({
  page,
  stack,
}) => {
  await recordStatuses(page);
  await askPending(page, stack, 'Reset: when is breakfast?', 2500);
  expect(stack.relay.reset()).toBe(1);
  await expect(conversation(page).getByText(/Breakfast is served/)).toBeVisible({ timeout: 15_000 });
  await answeredOnce(page, stack, 'Reset: when is breakfast?', /Breakfast is served/);
  expect(await statuses(page)).toContain(RECONNECTING);
});

test('a connection that goes silent without closing is found by the heartbeat, replaced, and the turn answered once', async ({
  page,
  stack,
}) => {
  test.setTimeout(90_000);
  await recordStatuses(page);
  await askPending(page, stack, 'Silent: where can I park?', 2000);
  expect(stack.relay.stall()).toBe(1);
  // 10 s of silence, a ping, 10 s without an answer: then a new connection replays the reply.
  await expect(conversation(page).getByText(/Parking is in the garage/)).toBeVisible({ timeout: 35_000 });
  await answeredOnce(page, stack, 'Silent: where can I park?', /Parking is in the garage/);
  expect(await statuses(page)).toContain(RECONNECTING);
});

test('a lost confirmation of a turn: the panel says it is reconnecting, the widget resends the turn and the server makes no second one', async ({
  page,
  stack,
}) => {
  await recordStatuses(page);
  await stack.behave('deferred', 300);
  await page.goto(stack.demoUrl);
  await launcher(page).click();
  stack.relay.loseNextConfirmation();
  const lostBefore = stack.relay.lost;
  await ask(page, 'Lost: is there a gym?');
  await expect(conversation(page).getByText(/spa and pool are open/)).toBeVisible({ timeout: 15_000 });
  expect(stack.relay.lost).toBe(lostBefore + 1);
  await answeredOnce(page, stack, 'Lost: is there a gym?', /spa and pool are open/);
  expect(await statuses(page)).toContain(RECONNECTING);
});

test('offline for 5 s: the panel says so, and the widget reconnects as soon as the browser is back', async ({
  page,
  context,
  stack,
}) => {
  await askPending(page, stack, 'Offline: what time is checkout?', 1500);
  await context.setOffline(true);
  await expect(page.getByRole('status').filter({ hasText: 'Offline' })).toBeVisible();
  await page.waitForTimeout(5_000);
  await context.setOffline(false);
  await expect(page.getByRole('status').filter({ hasText: 'Offline' })).toBeHidden();
  // No backoff left to wait out: the stored reply is replayed on the new connection at once.
  await expect(conversation(page).getByText(/Checkout is at 11/)).toBeVisible({ timeout: 2_000 });
  await answeredOnce(page, stack, 'Offline: what time is checkout?', /Checkout is at 11/);
});
