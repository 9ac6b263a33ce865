import { expect, type Page, test as base } from '@playwright/test';
import { Stack } from './stack.js';

/** One stack for the whole run (a single worker); each test starts from the hotel's default behaviour. */
export const test = base.extend<{ stack: Stack }, { shared: Stack }>({
  shared: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const stack = await Stack.start();
      await use(stack);
      await stack.stop();
    },
    { scope: 'worker', timeout: 60_000 },
  ],
  stack: async ({ shared }, use) => {
    await shared.behave('deferred', 800);
    await use(shared);
  },
});

export const launcher = (page: Page) => page.getByRole('button', { name: 'Chat with Harbor Hotel' });
export const composer = (page: Page) => page.getByRole('textbox', { name: 'Your message' });
export const conversation = (page: Page) => page.getByRole('list', { name: 'Conversation' });

/** Opens the widget on the hotel's page, or on another demo page (`/qa`, `/hostile`). */
export async function openWidget(page: Page, stack: Stack, path = ''): Promise<void> {
  await page.goto(stack.demoUrl + path);
  await launcher(page).click();
  await expect(page.getByRole('dialog', { name: 'Harbor Hotel' })).toBeVisible();
}

export async function ask(page: Page, text: string): Promise<void> {
  await composer(page).fill(text);
  await page.getByRole('button', { name: 'Send' }).click();
}

/** Opens the widget and asks a question the hotel answers after `delayMs`; returns while it is "thinking". */
export async function askPending(page: Page, stack: Stack, text: string, delayMs: number): Promise<void> {
  await stack.behave('deferred', delayMs);
  await openWidget(page, stack);
  await ask(page, text);
  await expect(page.getByText('is thinking')).toBeVisible();
}

/** The demo agent answered by the hotel's server again, as every other spec expects (after one that switched it). */
export async function answeredByHotelServer(stack: Stack): Promise<void> {
  await fetch(`${stack.demoUrl}/qa/responder`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ responder: 'hook' }),
  });
}

export { expect };

export { hearNext, hearWords, listenedIn, scriptedSpeech, type Spoken, spoken } from './scripted-speech.js';
