import { ask, composer, conversation, expect, launcher, openWidget, scriptedSpeech, spoken, test } from './fixtures.js';
import { seriousViolations } from './widget-audit.js';

test('a refused microphone is said in the panel, announced, reported to on("error"), and typing stays ready', async ({
  page,
  stack,
}) => {
  await scriptedSpeech(page, { fail: 'not-allowed' });
  await openWidget(page, stack);
  await page.evaluate(() => {
    const w = window as unknown as {
      __errors: unknown[];
      Concierge: { on(name: string, handler: (e: unknown) => void): void };
    };
    w.__errors = [];
    w.Concierge.on('error', (e) => w.__errors.push(e));
  });
  await page.getByRole('button', { name: 'Speak' }).click();
  await expect(page.getByRole('alert')).toHaveText(/microphone is blocked.*type your message/i);
  const errors = await page.evaluate(
    () => (window as unknown as { __errors: { code: string; message: string }[] }).__errors,
  );
  expect(errors).toEqual([
    { type: 'error', code: 'mic_unavailable', message: 'The microphone cannot be used: not-allowed' },
  ]);
  await expect(composer(page)).toBeFocused();
  await page.keyboard.type('Is there wifi?');
  await page.keyboard.press('Enter');
  await expect(conversation(page).getByText(/Harbor Guest/)).toBeVisible();

  // No microphone at all says so in its own words.
  await scriptedSpeech(page, { fail: 'audio-capture' });
  await page.reload();
  await launcher(page).click();
  await page.getByRole('button', { name: 'Speak' }).click();
  await expect(page.getByRole('alert')).toHaveText(/No microphone was found/);
});

test('a voice reply is read aloud only by the tab that asked, though every tab shows it', async ({
  page,
  context,
  stack,
}) => {
  await scriptedSpeech(page, { words: ['Where can I park the car'] });
  await openWidget(page, stack);
  await expect(conversation(page)).toBeVisible();
  // A duplicated tab: same conversation, its session storage copied from the first.
  const stored = await page.evaluate(() => JSON.stringify(sessionStorage));
  const twin = await context.newPage();
  await twin.addInitScript((entries) => {
    for (const [k, v] of Object.entries(JSON.parse(entries) as Record<string, string>)) sessionStorage.setItem(k, v);
  }, stored);
  await scriptedSpeech(twin);
  await openWidget(twin, stack);

  await page.getByRole('button', { name: 'Speak' }).click();
  for (const tab of [page, twin]) await expect(conversation(tab).getByText(/Parking is in the garage/)).toBeVisible();
  await expect.poll(() => spoken(page)).toHaveLength(1);
  await twin.waitForTimeout(500);
  expect(await spoken(twin)).toEqual([]);
  await twin.close();
});

test('axe-core finds no serious or critical violation: closed, open, thinking, answered, offline', async ({
  page,
  context,
  stack,
}) => {
  await page.goto(stack.demoUrl);
  await expect(launcher(page)).toBeVisible();
  expect(await seriousViolations(page), 'closed').toEqual([]);
  await launcher(page).click();
  await expect(composer(page)).toBeVisible();
  expect(await seriousViolations(page), 'open').toEqual([]);
  await stack.behave('deferred', 3000);
  await ask(page, 'What time is checkout?');
  await expect(page.getByText('is thinking')).toBeVisible();
  expect(await seriousViolations(page), 'thinking').toEqual([]);
  await expect(conversation(page).getByText(/Checkout is at 11/)).toBeVisible({ timeout: 10_000 });
  expect(await seriousViolations(page), 'answered').toEqual([]);
  await context.setOffline(true);
  await ask(page, 'Breakfast?');
  await expect(page.getByRole('status').filter({ hasText: 'Offline' })).toBeVisible();
  expect(await seriousViolations(page), 'offline, a question waiting to be sent').toEqual([]);
  await context.setOffline(false);
});

test.describe('on a phone', () => {
  test.use({ viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true });

  test('everything fits, nothing scrolls sideways, every tap target is 44×44 and the input text is 16px', async ({
    page,
    stack,
  }) => {
    await page.goto(stack.demoUrl);
    await launcher(page).tap();
    await composer(page).tap();
    await composer(page).fill('Where can I park?');
    await page.getByRole('button', { name: 'Send' }).tap();
    await expect(conversation(page).getByText(/Parking is in the garage/)).toBeVisible();
    await composer(page).fill(
      'A question long enough to wrap across the width of a phone screen, and then some more words',
    );
    const layout = await page.evaluate(() => {
      const root = document.querySelector('[data-concierge]')!.shadowRoot!;
      const box = (el: Element) => el.getBoundingClientRect();
      const panel = box(root.querySelector('.panel')!);
      return {
        pageWidth: document.documentElement.scrollWidth,
        viewport: window.innerWidth,
        panel: { left: panel.left, right: panel.right, top: panel.top, bottom: panel.bottom },
        height: window.innerHeight,
        // What is on the screen: the launcher steps aside under the phone's sheet.
        small: [...root.querySelectorAll('button, textarea')]
          .filter((el) => el.getClientRects().length > 0)
          .map((el) => ({
            name: el.getAttribute('aria-label') ?? el.textContent?.trim(),
            w: box(el).width,
            h: box(el).height,
          }))
          .filter((t) => t.w < 44 || t.h < 44),
        inputFontPx: parseFloat(getComputedStyle(root.querySelector('textarea')!).fontSize),
        logOverflow: root.querySelector('.log')!.scrollWidth - root.querySelector('.log')!.clientWidth,
      };
    });
    expect(layout.pageWidth).toBeLessThanOrEqual(layout.viewport);
    expect(layout.panel.left).toBeGreaterThanOrEqual(0);
    expect(layout.panel.right).toBeLessThanOrEqual(layout.viewport);
    expect(layout.panel.top).toBeGreaterThanOrEqual(0);
    expect(layout.panel.bottom).toBeLessThanOrEqual(layout.height);
    expect(layout.small).toEqual([]);
    expect(layout.inputFontPx).toBeGreaterThanOrEqual(16);
    expect(layout.logOverflow).toBe(0);
  });
});
