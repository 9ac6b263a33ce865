import { ask, conversation, expect, openWidget, test } from './fixtures.js';
import { seriousViolations } from './widget-audit.js';

test('a reply is rated with two toggle buttons, changed, and commented on; the history keeps the last rating; axe finds nothing', async ({
  page,
  stack,
}) => {
  await stack.behave('sync');
  await openWidget(page, stack);
  await ask(page, 'When is breakfast?');
  await expect(conversation(page).getByText(/Breakfast is served from 7/)).toBeVisible();
  const rating = page.getByRole('group', { name: 'Rate this answer' });
  const helpful = rating.getByRole('button', { name: 'Helpful', exact: true });
  const notHelpful = rating.getByRole('button', { name: 'Not helpful' });
  await expect(helpful).toHaveAttribute('aria-pressed', 'false');
  await helpful.click();
  await expect(helpful).toHaveAttribute('aria-pressed', 'true');
  // By keyboard: the other vote replaces the first.
  await notHelpful.focus();
  await page.keyboard.press('Enter');
  await expect(notHelpful).toHaveAttribute('aria-pressed', 'true');
  await expect(helpful).toHaveAttribute('aria-pressed', 'false');
  await page.getByRole('textbox', { name: 'Tell us more (optional)' }).fill('I hoped for an earlier start');
  const send = page.locator('li.comment').getByRole('button', { name: 'Send' });
  // Readable: white on the accent, not white on white.
  expect(await send.evaluate((el) => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor])).toEqual([
    'rgb(255, 255, 255)',
    'rgb(11, 110, 79)',
  ]);
  await send.click();
  await expect(page.getByRole('status').filter({ hasText: 'Thanks for your feedback.' })).toBeVisible();
  expect(await seriousViolations(page), 'rated').toEqual([]);
  // Drawn thumbs, not emoji (an empty box on a system without an emoji font).
  await expect(helpful.locator('svg')).toHaveCount(1);
  expect(await helpful.textContent()).toBe('');

  const headers = { authorization: `Bearer ${stack.apiKey}` };
  await expect
    .poll(async () => {
      const list = (await (
        await fetch(
          `${stack.serviceUrl}/api/v1/conversations?deployment_id=${stack.deploymentId}&search=${encodeURIComponent('When is breakfast?')}`,
          { headers },
        )
      ).json()) as { data: { id: string }[] };
      const detail = (await (
        await fetch(`${stack.serviceUrl}/api/v1/conversations/${list.data[0]!.id}`, { headers })
      ).json()) as { data: { turns: { feedback: unknown }[] } };
      return detail.data.turns.at(-1)!.feedback;
    })
    .toMatchObject({ rating: 'down', comment: 'I hoped for an earlier start' });

  // After a reload the vote is still shown (from the stored events), without the comment line.
  await page.reload();
  await page.getByRole('button', { name: 'Chat with Harbor Hotel' }).click();
  await expect(
    page.getByRole('group', { name: 'Rate this answer' }).getByRole('button', { name: 'Not helpful' }),
  ).toHaveAttribute('aria-pressed', 'true');
  await expect(page.getByRole('textbox', { name: 'Tell us more (optional)' })).toHaveCount(0);

  // Only the newest reply shows its rating; an older unrated one shows it on hover.
  await ask(page, 'Where do I park?');
  await expect(conversation(page).getByText(/Parking is in the garage/)).toBeVisible();
  await ask(page, 'Is there wifi?');
  await expect(conversation(page).locator('.msg.agent').last()).not.toContainText('Parking');
  const parking = conversation(page)
    .locator('.msg.agent')
    .filter({ hasText: /Parking is in the garage/ });
  const opacity = () => parking.locator('.rate').evaluate((el) => getComputedStyle(el).opacity);
  expect(await opacity()).toBe('0');
  await parking.hover();
  await expect.poll(opacity).toBe('1');
  await page.screenshot({ path: 'test-results/widget/feedback.png' });
});
