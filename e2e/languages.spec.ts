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

    const menu = panel.getByRole('combobox', { name: 'Sprache' });
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
    await expect(page.getByRole('combobox', { name: 'Langue' })).toHaveValue('fr-FR');
    await expect(page.getByRole('textbox', { name: 'Votre message' })).toHaveAttribute(
      'placeholder',
      'Posez une question…',
    );
  });
});

test.describe('a visitor whose browser speaks Hebrew', () => {
  test.use({ locale: 'he-IL' });

  test('gets the panel right to left, mirrored to the other side, its words in Hebrew, and axe finds nothing', async ({
    page,
    stack,
  }) => {
    await page.goto(stack.demoUrl);
    const launcher = page.getByRole('button', { name: 'צ׳אט עם Harbor Hotel' });
    // The deployment puts the widget bottom-right: right to left, it sits bottom-left.
    const box = (await launcher.boundingBox())!;
    expect(box.x + box.width).toBeLessThan(page.viewportSize()!.width / 2);
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
