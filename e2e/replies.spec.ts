import type { Page } from '@playwright/test';
import { ask, conversation, expect, launcher, openWidget, scriptedSpeech, spoken, test } from './fixtures.js';

/** README, Streaming a reply and Actions on a reply, as a visitor meets them. */

const DINNER = [
  'Our restaurant by the water serves dinner from 6 to 10 pm.',
  'Pick a time and I will ask the front desk to hold a table, or book online.',
];

/**
 * Watches the widget's next reply line as it changes: every text it showed, in order, when each
 * was shown, and whether the line was ever replaced by another element (a flicker).
 */
async function watchReplies(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __shown: { text: string; at: number }[]; __replaced: number };
    w.__shown = [];
    w.__replaced = 0;
    const log = document.querySelector('[data-concierge]')!.shadowRoot!.querySelector('.log')!;
    const before = new Set(log.querySelectorAll('.msg.agent'));
    let line: Element | undefined;
    new MutationObserver(() => {
      const agent = [...log.querySelectorAll('.msg.agent')].filter((l) => !before.has(l)).pop();
      if (!agent) return;
      if (line && agent !== line) w.__replaced++;
      line = agent;
      const text = agent.textContent ?? '';
      if (w.__shown[w.__shown.length - 1]?.text !== text) w.__shown.push({ text, at: performance.now() });
    }).observe(log, { subtree: true, childList: true, characterData: true });
  });
}

const shown = (page: Page) =>
  page.evaluate(() => (window as unknown as { __shown: { text: string; at: number }[] }).__shown);

test('a streamed reply shows as it is written, the final text replaces it in place, and a voice turn hears each sentence once as soon as it is complete', async ({
  page,
  stack,
}) => {
  await stack.behave('stream', 100);
  await scriptedSpeech(page, { words: ['Can I have dinner tonight'] });
  await openWidget(page, stack);
  await watchReplies(page);
  await page.getByRole('button', { name: 'Speak' }).click();
  await expect(conversation(page).getByText(DINNER[1]!)).toBeVisible();

  const texts = await shown(page);
  // Several growing texts, each the one before plus the next part, ending with the final reply.
  expect(texts.length).toBeGreaterThan(5);
  for (let i = 1; i < texts.length; i++) expect(texts[i]!.text.startsWith(texts[i - 1]!.text)).toBe(true);
  expect(texts[texts.length - 1]!.text).toBe(DINNER.join(' '));
  expect(await page.evaluate(() => (window as unknown as { __replaced: number }).__replaced)).toBe(0);

  await expect.poll(() => spoken(page)).toHaveLength(2);
  const said = await spoken(page);
  expect(said.map((s) => s.text)).toEqual(DINNER);
  // The first sentence was spoken while the rest was still being written.
  const complete = texts.find((t) => t.text === DINNER.join(' '))!;
  expect(said[0]!.at).toBeLessThan(complete.at);
});

test('a reload in the middle of a spoken reply goes on with the next sentence, and says none twice', async ({
  page,
  stack,
}) => {
  await stack.behave('no_reply');
  await scriptedSpeech(page, { words: ['Tell me about dinner'] });
  await openWidget(page, stack);
  await page.getByRole('button', { name: 'Speak' }).click();
  const turn = await stack.hookedTurn('Tell me about dinner');
  expect(await stack.reply(turn, { part: 0, text: 'Dinner is from 6. ' })).toBe(202);
  expect(await stack.reply(turn, { part: 1, text: 'We close' })).toBe(202);
  await expect.poll(async () => (await spoken(page)).map((s) => s.text)).toEqual(['Dinner is from 6.']);

  await page.reload();
  await launcher(page).click();
  await expect(conversation(page).getByText('Dinner is from 6. We close')).toBeVisible();
  expect(await stack.reply(turn, { part: 2, text: ' at 10. Book ahead.' })).toBe(202);
  expect(await stack.reply(turn, { reply_text: 'Dinner runs from 6 pm. We close at 10. Book ahead.' })).toBe(202);
  await expect(conversation(page).getByText('Dinner runs from 6 pm. We close at 10. Book ahead.')).toBeVisible();
  await expect.poll(async () => (await spoken(page)).map((s) => s.text)).toEqual(['We close at 10.', 'Book ahead.']);
  await page.waitForTimeout(300);
  expect((await spoken(page)).map((s) => s.text)).toEqual(['We close at 10.', 'Book ahead.']);
});

test('reply text is shown as text: markup stays words, lines break, "- " lines are a list, URLs are links', async ({
  page,
  stack,
}) => {
  await stack.behave('no_reply');
  await openWidget(page, stack);
  await ask(page, 'What is on the menu?');
  const turn = await stack.hookedTurn('What is on the menu?');
  const text =
    'Tonight:\nFresh from the harbour.\n- <b>Sole</b> <img src=x onerror="window.__xss=1">\n- Oysters\nMenu: https://hotel.example/menu?day=1. Enjoy!';
  expect(await stack.reply(turn, { reply_text: text })).toBe(202);
  const reply = conversation(page).locator('.msg.agent').last();
  await expect(reply.getByRole('listitem')).toHaveText(['<b>Sole</b> <img src=x onerror="window.__xss=1">', 'Oysters']);
  await expect(reply.locator('img, b')).toHaveCount(0);
  const link = reply.getByRole('link', { name: 'https://hotel.example/menu?day=1' });
  await expect(link).toHaveAttribute('href', 'https://hotel.example/menu?day=1');
  await expect(link).toHaveAttribute('target', '_blank');
  await expect(link).toHaveAttribute('rel', 'noopener noreferrer');
  // A line break is kept: the first two lines stay two lines.
  expect(
    await reply
      .locator('.para')
      .first()
      .evaluate((e) => (e as HTMLElement).innerText),
  ).toBe('Tonight:\nFresh from the harbour.');
  expect(await page.evaluate(() => (window as unknown as { __xss?: number }).__xss)).toBeUndefined();
});

test('quick replies and a link: keyboard-reachable buttons in a labelled group; a quick reply asks, and they go once anything is sent', async ({
  page,
  context,
  stack,
}) => {
  await stack.behave('deferred', 100);
  await openWidget(page, stack);
  await ask(page, 'Can I book a table?');
  const actions = page.getByRole('group', { name: 'Suggested actions' });
  await expect(actions.getByRole('button')).toHaveText(['7 pm', '8 pm']);
  const book = actions.getByRole('link', { name: /Book online/ });
  await expect(book).toHaveAttribute('rel', 'noopener noreferrer');
  await expect(book).toHaveAttribute('target', '_blank');
  const [tab] = await Promise.all([context.waitForEvent('page'), book.click()]);
  await tab.waitForLoadState();
  expect(new URL(tab.url()).pathname).toBe('/book');
  await tab.close();

  await actions.getByRole('button', { name: '8 pm' }).focus();
  await page.keyboard.press('Enter');
  await expect(conversation(page).locator('.msg.user').last()).toHaveText('A table for two at 8 pm, please.');
  // The hotel holds the table and offers only a link to change it; the first reply's buttons are gone.
  await expect(conversation(page).locator('.msg.agent')).toHaveCount(2);
  await expect(conversation(page).locator('.msg.agent').last()).toContainText('Done: a table for two at 8 pm');
  await expect(page.getByRole('group', { name: 'Suggested actions' }).getByRole('button')).toHaveCount(0);
  await expect(
    page.getByRole('group', { name: 'Suggested actions' }).getByRole('link', { name: /Change the booking/ }),
  ).toHaveCount(1);
  await ask(page, 'Thanks');
  await expect(page.getByRole('group', { name: 'Suggested actions' }).getByRole('button')).toHaveCount(0);
  await expect(page.getByRole('group', { name: 'Suggested actions' }).getByRole('link')).toHaveCount(2);
});

test('a client action runs once on the page that asked, not on replay or in another tab; a throwing handler is action_failed and the widget goes on', async ({
  page,
  context,
  stack,
}) => {
  await stack.behave('deferred', 100);
  await openWidget(page, stack);
  const twin = await context.newPage();
  const stored = await page.evaluate(() => JSON.stringify(sessionStorage));
  await twin.addInitScript((entries) => {
    for (const [k, v] of Object.entries(JSON.parse(entries) as Record<string, string>)) sessionStorage.setItem(k, v);
  }, stored);
  await openWidget(twin, stack);

  const shownTimes = (p: Page) => p.evaluate(() => document.getElementById('rooms')!.dataset.shownTimes);
  await ask(page, 'Which rooms have a view?');
  for (const tab of [page, twin]) await expect(conversation(tab).getByText(/All twenty-four rooms/)).toBeVisible();
  await expect.poll(() => shownTimes(page)).toBe('1');
  await page.waitForTimeout(300);
  expect([await shownTimes(page), await shownTimes(twin)]).toEqual(['1', undefined]);
  await twin.close();

  await page.reload();
  await launcher(page).click();
  await expect(conversation(page).getByText(/All twenty-four rooms/)).toBeVisible();
  await page.waitForTimeout(300);
  expect(await shownTimes(page)).toBeUndefined();

  await page.evaluate(() => {
    const w = window as unknown as {
      __errors: unknown[];
      Concierge: { registerAction(n: string, h: () => void): void; on(n: string, h: (e: unknown) => void): void };
    };
    w.__errors = [];
    w.Concierge.registerAction('show_rooms', () => {
      throw new Error('the rooms are gone');
    });
    w.Concierge.on('error', (e) => w.__errors.push(e));
  });
  await ask(page, 'Show me the suites');
  await expect
    .poll(() => page.evaluate(() => (window as unknown as { __errors: unknown[] }).__errors))
    .toEqual([{ type: 'error', code: 'action_failed', name: 'show_rooms', message: 'show_rooms: the rooms are gone' }]);
  await ask(page, 'When is breakfast?');
  await expect(conversation(page).getByText(/Breakfast is served from 7/)).toBeVisible();
});
