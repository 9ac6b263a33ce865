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

export { expect };

export interface Spoken {
  text: string;
  lang: string;
  rate: number;
  pitch: number;
  /** When it was handed to the synthesiser (`performance.now()`). */
  at: number;
}

/**
 * A scripted recogniser in place of the browser's: it "hears" `words` (each but the last as interim
 * results, 300 ms apart) or fails with the recognition error `fail`; the synthesiser only records.
 * With `stepped`, each word after the first waits for {@link hearNext} instead of 300 ms, so a
 * test can look at an interim result without racing the next one.
 */
export async function scriptedSpeech(page: Page, script: { words?: string[]; fail?: string; stepped?: boolean } = {}): Promise<void> {
  await page.addInitScript((o) => {
    const w = window as unknown as Record<string, unknown>;
    const spoken: Spoken[] = [];
    w.__spoken = spoken;
    class ScriptedRecognition {
      lang = '';
      interimResults = false;
      continuous = false;
      onresult: ((e: unknown) => void) | null = null;
      onend: (() => void) | null = null;
      onerror: ((e: unknown) => void) | null = null;
      start() {
        const words = o.words ?? [];
        const result = (text: string, isFinal: boolean) => ({ resultIndex: 0, results: { length: 1, 0: { isFinal, 0: { transcript: text } } } });
        const finish = () =>
          setTimeout(() => {
            if (o.fail) this.onerror?.({ error: o.fail });
            this.onend?.();
          }, 300);
        const hear = (i: number) => {
          this.onresult?.(result(words[i]!, i === words.length - 1));
          if (i === words.length - 1) finish();
          else if (o.stepped) w.__hearNext = () => hear(i + 1);
          else setTimeout(() => hear(i + 1), 300);
        };
        if (words.length) setTimeout(() => hear(0), 300);
        else finish();
      }
      stop() {
        this.onend?.();
      }
    }
    w.SpeechRecognition = ScriptedRecognition;
    speechSynthesis.speak = (u: SpeechSynthesisUtterance) => void spoken.push({ text: u.text, lang: u.lang, rate: u.rate, pitch: u.pitch, at: performance.now() });
  }, script);
}

/** With `stepped` speech: the recogniser hears its next word now. */
export const hearNext = (page: Page): Promise<void> => page.evaluate(() => (window as unknown as { __hearNext: () => void }).__hearNext());

/** What the scripted synthesiser was asked to say on this page. */
export const spoken = (page: Page): Promise<Spoken[]> => page.evaluate(() => (window as unknown as { __spoken: Spoken[] }).__spoken);
