import { expect, hearWords, listenedIn, scriptedSpeech, spoken, test } from './fixtures.js';
import { seriousViolations } from './widget-audit.js';

test.describe('a visitor whose browser speaks German', () => {
  test.use({ locale: 'de-DE' });

  test('sees German words while the English agent listens in English; the menu switches the words, recognition and the turn’s language, and survives a reload', async ({
    page,
    stack,
  }) => {
    await scriptedSpeech(page, { words: ['Hello'] });
    await page.goto(stack.demoUrl);
    await page.getByRole('button', { name: 'Mit Harbor Hotel chatten' }).click();
    const panel = page.getByRole('dialog', { name: 'Harbor Hotel' });
    await expect(panel.getByRole('textbox', { name: 'Ihre Nachricht' })).toHaveAttribute(
      'placeholder',
      'Stellen Sie eine Frage…',
    );
    await expect(panel.getByRole('button', { name: 'Senden' })).toBeVisible();
    expect(await seriousViolations(page), 'German, open').toEqual([]);

    // No choice yet: the conversation is in the agent's language.
    await panel.getByRole('button', { name: 'Sprechen' }).click();
    const log = panel.getByRole('list', { name: 'Unterhaltung' });
    await expect(log.getByText('Hello! How can I help with your stay?')).toBeVisible();
    expect(await listenedIn(page)).toEqual(['en-US']);

    const menu = panel.getByRole('combobox', { name: 'Sprache des Gesprächs' });
    await expect(menu).toHaveValue('en-US');
    await menu.selectOption('de-DE');
    await hearWords(page, ['Hallo']);
    await panel.getByRole('button', { name: 'Sprechen' }).click();
    // The hotel's server was told the turn is in German, and answers in German; so is the reply read out.
    await expect(log.getByText('Hallo! Wie kann ich Ihnen bei Ihrem Aufenthalt helfen?')).toBeVisible();
    expect(await listenedIn(page)).toEqual(['en-US', 'de-DE']);
    await expect
      .poll(async () => (await spoken(page)).map((s) => [s.text, s.lang]))
      .toEqual([
        ['Hello!', 'en-US'],
        ['How can I help with your stay?', 'en-US'],
        ['Hallo!', 'de-DE'],
        ['Wie kann ich Ihnen bei Ihrem Aufenthalt helfen?', 'de-DE'],
      ]);

    // Choosing French changes the words too (the page set no locale of its own).
    await menu.selectOption('fr-FR');
    await expect(panel.getByRole('button', { name: 'Envoyer' })).toBeVisible();
    await page.reload();
    await page.getByRole('button', { name: 'Discuter avec Harbor Hotel' }).click();
    await expect(page.getByRole('combobox', { name: 'Langue de la conversation' })).toHaveValue('fr-FR');
    await expect(page.getByRole('textbox', { name: 'Votre message' })).toHaveAttribute(
      'placeholder',
      'Posez une question…',
    );
  });
});

test('switching to Arabic leaves the widget where it is, and each message keeps its own direction', async ({
  page,
  stack,
}) => {
  await page.goto(stack.demoUrl);
  const launcher = page.getByRole('button', { name: 'Chat with Harbor Hotel' });
  const before = (await launcher.boundingBox())!;
  await launcher.click();
  const panel = page.getByRole('dialog', { name: 'Harbor Hotel' });
  await panel.getByRole('textbox', { name: 'Your message' }).fill('Hello');
  await panel.getByRole('button', { name: 'Send' }).click();
  // Its accessible name follows the words: found by its class once they are Arabic.
  const log = panel.locator('ol.log');
  const reply = log.getByText('Hello! How can I help with your stay?');
  await expect(reply).toBeVisible();
  await expect(panel.getByRole('combobox', { name: 'Language of the conversation' })).toHaveValue('en-US');
  // Its name changes with the words: found by its role alone from here.
  const menu = panel.getByRole('combobox');
  await menu.selectOption('ar-SA');
  await expect(panel).toHaveAttribute('dir', 'rtl');
  const after = (await page.locator('[data-concierge] .launcher').boundingBox())!;
  expect([after.x, after.y]).toEqual([before.x, before.y]);
  // The English reply still reads left to right inside the right-to-left panel.
  expect(await reply.evaluate((el) => getComputedStyle(el.closest('[dir="auto"]')!).direction)).toBe('ltr');
  await panel.getByRole('textbox').fill('مرحبا');
  await panel.getByRole('textbox').press('Enter');
  const arabic = log.getByText('مرحبا', { exact: true });
  await expect(arabic).toBeVisible();
  expect(await arabic.evaluate((el) => getComputedStyle(el.closest('[dir="auto"]')!).direction)).toBe('rtl');
  await expect(menu).toHaveValue('ar-SA');
  expect(await seriousViolations(page), 'Arabic, open').toEqual([]);
  await page.screenshot({ path: 'test-results/widget/arabic-switch.png' });
});

test.describe('a visitor whose browser speaks Hebrew', () => {
  test.use({ locale: 'he-IL' });

  test('gets the panel right to left where the deployment put it, its words in Hebrew, and axe finds nothing', async ({
    page,
    stack,
  }) => {
    await page.goto(stack.demoUrl);
    const launcher = page.getByRole('button', { name: 'צ׳אט עם Harbor Hotel' });
    // The deployment puts the widget bottom-right: it stays there right to left.
    const box = (await launcher.boundingBox())!;
    expect(box.x).toBeGreaterThan(page.viewportSize()!.width / 2);
    expect(await seriousViolations(page), 'Hebrew, closed').toEqual([]);
    await launcher.click();
    const panel = page.getByRole('dialog', { name: 'Harbor Hotel' });
    await expect(panel).toHaveAttribute('dir', 'rtl');
    await expect(panel.getByRole('button', { name: 'שליחה' })).toBeVisible();
    // Mirrored: the close button is at the panel's left, the title at its right.
    const close = (await panel.getByRole('button', { name: 'סגירה' }).boundingBox())!;
    const title = (await panel.getByRole('heading', { name: 'Harbor Hotel' }).boundingBox())!;
    expect(close.x).toBeLessThan(title.x);
    expect(await seriousViolations(page), 'Hebrew, open').toEqual([]);
  });
});
