import type { Page } from '@playwright/test';

/**
 * The browser's speech, scripted: the e2e suite and the bench drive voice turns with it in real
 * Chromium, where headless recognition and synthesis do not exist.
 */

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
 * test can look at an interim result without racing the next one; {@link hearWords} changes what
 * the next listening hears.
 */
export async function scriptedSpeech(
  page: Page,
  script: { words?: string[]; fail?: string; stepped?: boolean } = {},
): Promise<void> {
  // Under tsx (the bench) the function below is compiled keeping its names through a `__name`
  // helper that exists in Node, not in the page.
  await page.addInitScript({ content: 'globalThis.__name ??= (f) => f;' });
  await page.addInitScript((o) => {
    // globalThis, not window: this file is typed by the bench's (Node) program too.
    const w = globalThis as unknown as Record<string, unknown> & {
      speechSynthesis: { speak(u: { text: string; lang: string; rate: number; pitch: number }): void };
    };
    const spoken: Spoken[] = [];
    w.__spoken = spoken;
    w.__listenedIn = [];
    class ScriptedRecognition {
      lang = '';
      interimResults = false;
      continuous = false;
      onresult: ((e: unknown) => void) | null = null;
      onend: (() => void) | null = null;
      onerror: ((e: unknown) => void) | null = null;
      start() {
        (w.__listenedIn as string[]).push(this.lang);
        // What the page was told to hear next (see hearWords), else the script's words.
        const words = (w.__words as string[] | undefined) ?? o.words ?? [];
        const result = (text: string, isFinal: boolean) => ({
          resultIndex: 0,
          results: { length: 1, 0: { isFinal, 0: { transcript: text } } },
        });
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
    // It says each sentence in a moment: its first word begins, then it ends, as a real voice reports.
    w.speechSynthesis.speak = (u) => {
      spoken.push({ text: u.text, lang: u.lang, rate: u.rate, pitch: u.pitch, at: performance.now() });
      const said = u as unknown as { onboundary?: (e: { charIndex: number }) => void; onend?: () => void };
      setTimeout(() => said.onboundary?.({ charIndex: 0 }), 5);
      setTimeout(() => said.onend?.(), 20);
    };
  }, script);
}

/** With `stepped` speech: the recogniser hears its next word now. */
export const hearNext = (page: Page): Promise<void> =>
  page.evaluate(() => (globalThis as unknown as { __hearNext: () => void }).__hearNext());

/** What the scripted synthesiser was asked to say on this page. */
export const spoken = (page: Page): Promise<Spoken[]> =>
  page.evaluate(() => (globalThis as unknown as { __spoken: Spoken[] }).__spoken);

/** The recogniser hears these words the next times it listens, whatever the script said. */
export const hearWords = (page: Page, words: string[]): Promise<void> =>
  page.evaluate((heard) => void ((globalThis as unknown as { __words: string[] }).__words = heard), words);

/** The language the recogniser was asked to listen in, each time it listened on this page. */
export const listenedIn = (page: Page): Promise<string[]> =>
  page.evaluate(() => (globalThis as unknown as { __listenedIn: string[] }).__listenedIn);
