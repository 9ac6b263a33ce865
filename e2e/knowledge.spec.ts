import { ask, conversation, expect, launcher, scriptedSpeech, spoken, test } from './fixtures.js';

/**
 * Answers from your documents (README) in real Chromium: the demo hotel's concierge answering from
 * its guest guide (a page of the demo site the service fetched into a knowledge base), with no
 * server and no model, switched on from the QA panel as QA would.
 */

test.afterEach(async ({ stack }) => {
  await fetch(`${stack.demoUrl}/qa/responder`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ responder: 'hook' }),
  });
});

test("Chromium: the hotel's pages answer a guest, the source is linked (shown, never said), and what they do not hold goes to a person", async ({
  page,
  context,
  stack,
}) => {
  await scriptedSpeech(page, { words: ['Where can I park?'] });
  await page.goto(`${stack.demoUrl}/qa`);
  const answerer = page.getByRole('combobox', { name: 'Who answers' });
  await answerer.selectOption({ label: "The hotel's pages (its guest guide: no server, no model)" });
  await page.getByRole('button', { name: 'Switch' }).click();
  await expect(page.locator('#qa-responder-applied')).toHaveText("Now: the hotel's pages");

  await launcher(page).click();
  // Asked aloud, so the answer is said as well as shown.
  await page.getByRole('button', { name: 'Speak' }).click();
  const reply = conversation(page).locator('.msg.agent').last();
  await expect(reply).toContainText('The garage under the hotel has forty spaces, entrance on Quay Street.', {
    timeout: 10_000,
  });
  const source = page.getByRole('group', { name: 'Suggested actions' }).getByRole('link', {
    name: /Harbor Hotel guest guide/,
  });
  await expect(source).toHaveAttribute('href', `${stack.demoUrl}/guide#parking`);
  // Said as it is shown, without the link.
  await expect
    .poll(async () => (await spoken(page)).map((s) => s.text).join(' '))
    .toContain('The garage under the hotel has forty spaces');
  expect((await spoken(page)).map((s) => s.text).join(' ')).not.toMatch(/guest guide|http/);
  await page.screenshot({ path: 'test-results/widget/knowledge-answer.png' });

  // The link opens the guide at its section.
  const [tab] = await Promise.all([context.waitForEvent('page'), source.click()]);
  await tab.waitForLoadState();
  expect(new URL(tab.url()).hash).toBe('#parking');
  await expect(tab.getByRole('heading', { name: 'Parking' })).toBeInViewport();
  await tab.screenshot({ path: 'test-results/widget/knowledge-source.png' });
  await tab.close();

  // A follow-up is read with the question before it.
  await ask(page, 'How much is it a night?');
  await expect(conversation(page).locator('.msg.agent').last()).toContainText('A night costs 18 euros');

  await ask(page, 'Can I land a helicopter on the roof?');
  await expect(conversation(page).locator('.msg.agent').last()).toContainText("I don't know");
  const person = page.getByRole('group', { name: 'Suggested actions' }).getByRole('button');
  await expect(person).toHaveCount(1);
  await person.click();
  await expect(conversation(page).locator('.msg.agent').last()).toHaveText(
    'A person from the team will answer you here.',
  );
  await page.screenshot({ path: 'test-results/widget/knowledge-unknown.png' });
});
