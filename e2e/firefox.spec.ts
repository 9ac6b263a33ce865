import { mkdirSync } from 'node:fs';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { expect, test as base } from './fixtures.js';
import { HEARD } from './stack.js';
import { fittingLayout, PANEL_SCREENS, panelLayout, seriousViolations } from './widget-audit.js';

/**
 * The same widget in Debian's Firefox ESR, driven over WebDriver BiDi by puppeteer-core (Playwright
 * can only drive its own patched Firefox build, which cannot be downloaded here).
 */
const test = base.extend<{ tab: Page }, { firefox: Browser }>({
  firefox: [
    // eslint-disable-next-line no-empty-pattern
    async ({}, use) => {
      const browser = await puppeteer.launch({
        browser: 'firefox',
        executablePath: process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr',
        headless: true,
      });
      await use(browser);
      await browser.close();
    },
    { scope: 'worker', timeout: 60_000 },
  ],
  tab: async ({ firefox }, use) => {
    const context = await firefox.createBrowserContext();
    await use(await context.newPage());
    await context.close();
  },
});

const widget = (selector: string) => `[data-concierge] >>> ${selector}`;

/**
 * A Firefox of its own with a fake microphone (a tone) and a mock audio device: headless Firefox
 * here has none, and an AudioContext without one never runs. Both are preferences at launch.
 */
const firefoxWithAudio = () =>
  puppeteer.launch({
    browser: 'firefox',
    executablePath: process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr',
    headless: true,
    extraPrefsFirefox: {
      'media.navigator.streams.fake': true,
      'media.navigator.permission.disabled': true,
      'media.cubeb.force_mock_context': true,
    },
  });

/** The conversation's text, read from inside the widget's shadow root. */
const transcript = (tab: Page) =>
  tab.evaluate(() => document.querySelector('[data-concierge]')?.shadowRoot?.querySelector('.log')?.textContent ?? '');

async function waitForTranscript(tab: Page, pattern: RegExp, timeout = 15_000): Promise<void> {
  await tab
    .waitForFunction(
      (source) =>
        new RegExp(source).test(
          document.querySelector('[data-concierge]')?.shadowRoot?.querySelector('.log')?.textContent ?? '',
        ),
      { timeout, polling: 100 },
      pattern.source,
    )
    .catch(async (err: Error) => {
      // What the panel said instead, for the failure to explain itself.
      const panel = await tab.evaluate(() => document.querySelector('[data-concierge]')?.shadowRoot?.textContent ?? '');
      throw new Error(`${err.message}: no ${pattern} in the panel, which shows: ${panel}`);
    });
}

async function openPanel(tab: Page, url: string): Promise<void> {
  await tab.goto(url);
  await (await tab.waitForSelector(widget('.launcher')))!.click();
  await tab.waitForSelector(widget('textarea'), { visible: true });
}

/** Until the widget's session is ready: the page heard its `ready` event. */
async function waitForReady(tab: Page): Promise<void> {
  await tab.waitForFunction(
    () => !document.querySelector('[data-concierge]')?.shadowRoot?.textContent?.includes('Connecting'),
    { polling: 100, timeout: 15_000 },
  );
}

/** The mic pressed, the fake microphone's tone streamed 1.5 s (a tone never falls quiet), and pressed again. */
async function speakWithFakeMic(tab: Page): Promise<void> {
  await (await tab.waitForSelector(widget('button.mic')))!.click();
  await tab.waitForFunction(
    () => document.querySelector('[data-concierge]')?.shadowRoot?.querySelector('button.mic[aria-pressed="true"]'),
    { polling: 100 },
  );
  await new Promise((r) => setTimeout(r, 1_500));
  await (await tab.waitForSelector(widget('button.mic')))!.click();
}

async function type(tab: Page, text: string): Promise<void> {
  await (await tab.waitForSelector(widget('textarea')))!.type(text);
  await tab.keyboard.press('Enter');
}

test('Firefox: a typed question gets its reply', async ({ tab, stack }) => {
  await openPanel(tab, stack.demoUrl);
  await type(tab, 'When is breakfast?');
  await waitForTranscript(tab, /Breakfast is served from 7/);
  expect(await transcript(tab)).toContain('When is breakfast?');
});

test('Firefox: a reload during a pending turn resumes the conversation and gets the reply once', async ({
  tab,
  stack,
}) => {
  await stack.behave('deferred', 3000);
  await openPanel(tab, stack.demoUrl);
  await type(tab, 'Firefox: what time is checkout?');
  await waitForTranscript(tab, /Firefox: what time is checkout\?/);
  await tab.waitForSelector(widget('.thinking'));
  await tab.reload();
  await (await tab.waitForSelector(widget('.launcher')))!.click();
  await waitForTranscript(tab, /Checkout is at 11/);
  const text = await transcript(tab);
  expect(text.split('Firefox: what time is checkout?')).toHaveLength(2);
  expect(text.split('Checkout is at 11')).toHaveLength(2);
  expect(await stack.hookCalls('Firefox: what time is checkout?')).toBe(1);
});

test("Firefox: where the deployment allows only the browser's recognition, which Firefox lacks, the mic explains itself and text still works", async ({
  tab,
  stack,
}) => {
  await stack.recogniseSpeech('browser');
  await openPanel(tab, stack.demoUrl);
  expect(await tab.evaluate(() => 'SpeechRecognition' in window || 'webkitSpeechRecognition' in window)).toBe(false);
  const mic = (await tab.waitForSelector(widget('button.mic')))!;
  expect(await mic.evaluate((el) => el.classList.contains('unavailable'))).toBe(true);
  await mic.click();
  const problem = (await tab.waitForSelector(widget('.problem[role=alert]')))!;
  expect(await problem.evaluate((el) => el.textContent)).toBe(
    'Voice input is not available here. Type your message instead.',
  );
  await type(tab, 'Is there wifi?');
  await waitForTranscript(tab, /Harbor Guest/);
  await stack.recogniseSpeech('auto');
});

test('Firefox: voice through the service from its fake microphone: the mic press, a second press, the question heard, its reply read out', async ({
  stack,
}) => {
  const browser = await firefoxWithAudio();
  // Press to talk: the fake microphone's tone is no speech, so only a press can end its utterance.
  await stack.voiceMode('push_to_talk');
  try {
    const tab = await browser.newPage();
    const uploads = stack.transcriber.uploads.length;
    await tab.evaluateOnNewDocument(() => {
      const w = window as unknown as {
        __spoken: string[];
        speechSynthesis: { speak(u: { text: string; onend?: () => void }): void };
      };
      w.__spoken = [];
      w.speechSynthesis.speak = (u) => {
        w.__spoken.push(u.text);
        setTimeout(() => u.onend?.(), 20);
      };
    });
    await openPanel(tab, stack.demoUrl);
    // Pressed before `ready`, the widget does not yet know the service hears it (ready.speech.recognition).
    await waitForReady(tab);
    // Firefox has no recognition of its own: the deployment's `auto` means the service's.
    await speakWithFakeMic(tab);
    await waitForTranscript(tab, /When is breakfast\?/);
    await waitForTranscript(tab, /Breakfast is served from 7/);
    await tab.waitForFunction(
      () => (window as unknown as { __spoken: string[] }).__spoken.some((t) => /Breakfast is served/.test(t)),
      { polling: 100, timeout: 10_000 },
    );
    const upload = stack.transcriber.uploads[uploads]!;
    expect(upload.wav).toMatchObject({ sampleRate: 16000, channels: 1, bitsPerSample: 16 });
    expect(upload.wav.dataBytes).toBeGreaterThan(32_000);
  } finally {
    await stack.voiceMode(undefined);
    await browser.close();
  }
});

test("Firefox: the service's voice plays a reply to its last sample, and typing mid-reply stops it with what was heard kept", async ({
  stack,
}) => {
  const browser = await firefoxWithAudio();
  await stack.synthesiseSpeech('service');
  await stack.voiceMode('push_to_talk');
  try {
    const tab = await browser.newPage();
    // The panel open and its session ready before the mic is pressed: audio sent while it still connects is not heard.
    await openPanel(tab, stack.demoUrl);
    await waitForReady(tab);
    await tab.evaluate(() => {
      const w = window as unknown as {
        __played: unknown[];
        Concierge: { on(name: string, handler: (e: unknown) => void): void };
      };
      w.__played = [];
      w.Concierge.on('playback', (e) => w.__played.push({ ...(e as object), at: performance.now() }));
    });
    const played = () =>
      tab.evaluate(
        () => (window as unknown as { __played: { turnId: string; state: string; offsetMs: number }[] }).__played,
      );
    await stack.behave('sync');
    const calls = stack.synthesiser.calls.length;
    // Earlier tests on this stack asked the same question: the hook's calls are counted from here.
    const asked = await stack.hookCalls(HEARD);
    await speakWithFakeMic(tab);
    await waitForTranscript(tab, /Breakfast is served from 7/);
    await tab.waitForFunction(() => (window as unknown as { __played: unknown[] }).__played.length === 1, {
      polling: 100,
      timeout: 15_000,
    });
    const said = String(stack.synthesiser.calls[calls]!.body.input);
    expect((await played())[0]).toMatchObject({ state: 'finished', offsetMs: said.length * 20 });

    await stack.behave('no_reply');
    await speakWithFakeMic(tab);
    // The same question again (the fake microphone's tone is heard as it): its turn is the second.
    await expect.poll(() => stack.hookCalls(HEARD)).toBe(asked + 2);
    const turn = await stack.hookedTurn(HEARD);
    // One long sentence (9 s of audio): Firefox's mock audio device plays faster than real time.
    const long =
      'Our rooms all look over the harbour, each with a deep bath, a desk by the window, a kettle, a small library of books about the coast, a record player with a few old records, heavy curtains for the long summer evenings, and a balcony where the morning sun comes in over the water before breakfast.';
    expect(await stack.reply(turn, { reply_text: long })).toBe(202);
    await waitForTranscript(tab, /deep bath/);
    await new Promise((r) => setTimeout(r, 300));
    await (await tab.waitForSelector(widget('textarea')))!.type('W');
    await tab.waitForFunction(() => (window as unknown as { __played: unknown[] }).__played.length === 2, {
      polling: 50,
      timeout: 5_000,
    });
    const cut = (await played())[1]!;
    expect(cut).toMatchObject({ turnId: turn.turn_id, state: 'interrupted' });
    expect(cut.offsetMs).toBeGreaterThan(0);
    expect(cut.offsetMs).toBeLessThan(long.length * 20);
    // The service keeps the words wholly heard before the offset.
    await expect.poll(() => stack.heard(turn)).toMatchObject({ interrupted: true });
    const text = (await stack.heard(turn))!.text;
    expect(long.startsWith(text) && text.length < long.length).toBe(true);
  } finally {
    await stack.synthesiseSpeech('browser');
    await stack.voiceMode(undefined);
    await browser.close();
  }
});

test('Firefox: hands-free, one press opens the mic: its state and level shown and announced, its tone not taken for speech, a second press closes it', async ({
  stack,
}) => {
  const browser = await firefoxWithAudio();
  try {
    const tab = await browser.newPage();
    const uploads = stack.transcriber.uploads.length;
    await openPanel(tab, stack.demoUrl);
    await waitForReady(tab);
    await tab.evaluate(() => {
      const w = window as unknown as {
        __listening: string[];
        Concierge: { on(name: string, handler: (e: { frame: { type: string } }) => void): void };
      };
      w.__listening = [];
      w.Concierge.on('listening', (e) => w.__listening.push(e.frame.type));
    });
    // Firefox has no recognition of its own: the service's, and so hands-free.
    await (await tab.waitForSelector(widget('button.mic')))!.click();
    const state = await tab.waitForFunction(
      () => {
        const line = document.querySelector('[data-concierge]')?.shadowRoot?.querySelector('.open-mic[role="status"]');
        const meter = line?.querySelector('.meter span') as HTMLElement | null | undefined;
        // The fake microphone's tone is loud: the meter moves.
        return line && meter && meter.style.transform !== 'scaleX(0.00)' && line.textContent;
      },
      { polling: 100, timeout: 10_000 },
    );
    expect(await state.jsonValue()).toBe('Listening…');
    expect(
      await tab.evaluate(() =>
        document
          .querySelector('[data-concierge]')
          ?.shadowRoot?.querySelector('button.mic')
          ?.getAttribute('aria-pressed'),
      ),
    ).toBe('true');
    // Three seconds of a steady tone: no speech, nothing sent to the recogniser.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await tab.evaluate(() => (window as unknown as { __listening: string[] }).__listening)).toEqual([]);
    expect(stack.transcriber.uploads.length).toBe(uploads);
    await (await tab.waitForSelector(widget('button.mic')))!.click();
    await tab.waitForFunction(
      () =>
        document
          .querySelector('[data-concierge]')
          ?.shadowRoot?.querySelector('button.mic')
          ?.getAttribute('aria-pressed') === 'false' &&
        !document.querySelector('[data-concierge]')?.shadowRoot?.querySelector('.open-mic'),
      { polling: 100, timeout: 5_000 },
    );
    // The socket is still open and serving: a typed question is answered.
    await type(tab, 'When is breakfast?');
    await waitForTranscript(tab, /Breakfast is served from 7/);
  } finally {
    await browser.close();
  }
});

test('Firefox: where the deployment lets the service recognise, the mic is shown; with no audio device to run it, voice is said to be unavailable and typing stays ready', async ({
  stack,
}) => {
  // A browser of its own: Firefox's fake microphone needs its preferences at launch. Headless here,
  // Firefox has no audio device, so its AudioContext never runs: the failure a visitor must be told.
  const browser = await puppeteer.launch({
    browser: 'firefox',
    executablePath: process.env.FIREFOX_PATH ?? '/usr/bin/firefox-esr',
    headless: true,
    extraPrefsFirefox: { 'media.navigator.streams.fake': true, 'media.navigator.permission.disabled': true },
  });
  try {
    const tab = await browser.newPage();
    await openPanel(tab, stack.demoUrl);
    // Firefox has no recognition of its own: the deployment's `auto` means the service's.
    await (await tab.waitForSelector(widget('button.mic')))!.click();
    const said = await tab.waitForFunction(
      () =>
        document.querySelector('[data-concierge]')?.shadowRoot?.querySelector('.problem[role="alert"]')?.textContent,
      { timeout: 10_000, polling: 100 },
    );
    expect(await said.jsonValue()).toBe('Voice input is not working right now. Type your message instead.');
    await type(tab, 'When is breakfast?');
    await waitForTranscript(tab, /Breakfast is served from 7/);
  } finally {
    await browser.close();
  }
});

test('Firefox: a streamed reply offers quick replies that ask, and the page runs its client action once', async ({
  tab,
  stack,
}) => {
  await stack.behave('stream', 100);
  await openPanel(tab, stack.demoUrl);
  await type(tab, 'A table for dinner?');
  await waitForTranscript(tab, /hold a table, or book online\./);
  await (await tab.waitForSelector(widget('.actions button')))!.click();
  await waitForTranscript(tab, /A table for two at 7 pm, please\./);
  await waitForTranscript(tab, /Done: a table for two at 7 pm is held in your name/);
  await type(tab, 'And the rooms?');
  await waitForTranscript(tab, /All twenty-four rooms look over the harbour/);
  await tab.waitForFunction(() => document.getElementById('rooms')?.dataset.shownTimes === '1', { timeout: 5_000 });
});

/** The page's `navigator.languages`, as a visitor's browser set to them reports it. */
const speaking = (tab: Page, languages: string[]) =>
  tab.evaluateOnNewDocument(
    (list) => Object.defineProperty(Navigator.prototype, 'languages', { get: () => list, configurable: true }),
    languages,
  );

/** What the widget's shadow root shows of an element: its attribute, or its text. */
const shown = (tab: Page, selector: string, attribute?: string) =>
  tab.evaluate(
    (sel, attr) => {
      const el = document.querySelector('[data-concierge]')?.shadowRoot?.querySelector(sel);
      return (attr ? el?.getAttribute(attr) : el?.textContent) ?? null;
    },
    selector,
    attribute,
  );

test('Firefox: a German browser gets German words; the menu switches them and the turn’s language, and survives a reload; axe finds nothing', async ({
  tab,
  stack,
}) => {
  await speaking(tab, ['de-DE', 'de']);
  await tab.goto(stack.demoUrl);
  await tab.waitForFunction(
    () =>
      document.querySelector('[data-concierge]')?.shadowRoot?.querySelector('.launcher')?.getAttribute('aria-label') ===
      'Mit Harbor Hotel chatten',
    { timeout: 10_000, polling: 100 },
  );
  await (await tab.waitForSelector(widget('.launcher')))!.click();
  await tab.waitForSelector(widget('textarea'), { visible: true });
  expect([await shown(tab, 'textarea', 'placeholder'), await shown(tab, 'button[type=submit]')]).toEqual([
    'Stellen Sie eine Frage…',
    'Senden',
  ]);
  expect(await seriousViolations(tab), 'German, open').toEqual([]);

  await (await tab.waitForSelector(widget('.head select')))!.select('de-DE');
  await type(tab, 'Hallo');
  await waitForTranscript(tab, /Hallo! Wie kann ich Ihnen bei Ihrem Aufenthalt helfen\?/);
  await (await tab.waitForSelector(widget('.head select')))!.select('fr-FR');
  await tab.waitForFunction(
    () =>
      document.querySelector('[data-concierge]')?.shadowRoot?.querySelector('button[type=submit]')?.textContent ===
      'Envoyer',
    { timeout: 10_000, polling: 100 },
  );
  await tab.reload();
  await (await tab.waitForSelector(widget('.launcher')))!.click();
  await tab.waitForFunction(
    () =>
      document.querySelector('[data-concierge]')?.shadowRoot?.querySelector('textarea')?.placeholder ===
      'Posez une question…',
    { timeout: 10_000, polling: 100 },
  );
  expect(
    await tab.evaluate(() => document.querySelector('[data-concierge]')?.shadowRoot?.querySelector('select')?.value),
  ).toBe('fr-FR');
});

test('Firefox: a Hebrew browser gets the panel right to left where the deployment put it, and axe finds nothing', async ({
  tab,
  stack,
}) => {
  await speaking(tab, ['he-IL']);
  await tab.goto(stack.demoUrl);
  await tab.waitForFunction(
    () => document.querySelector('[data-concierge]')?.shadowRoot?.querySelector('.root')?.getAttribute('lang') === 'he',
    { timeout: 10_000, polling: 100 },
  );
  const launcher = (await tab.waitForSelector(widget('.launcher')))!;
  const box = (await launcher.boundingBox())!;
  expect(box.x).toBeGreaterThan((await tab.evaluate(() => innerWidth)) / 2);
  await launcher.click();
  await tab.waitForSelector(widget('textarea'), { visible: true });
  expect([await shown(tab, '.panel', 'dir'), await shown(tab, 'button[type=submit]')]).toEqual(['rtl', 'שליחה']);
  expect(await seriousViolations(tab), 'Hebrew, open').toEqual([]);
});

test('Firefox: the open panel at 1280 and 390 px: Send inside the panel, the title on one line beside the whole language, a sheet over the whole phone', async ({
  tab,
  stack,
}) => {
  // Puppeteer writes a screenshot only where its folder is: this test may be the first to write there.
  mkdirSync('test-results/widget', { recursive: true });
  for (const screen of PANEL_SCREENS) {
    await tab.setViewport(screen);
    await openPanel(tab, stack.demoUrl);
    await waitForReady(tab);
    const { width } = screen;
    expect(await panelLayout(tab), `${width} px`).toEqual(fittingLayout(width));
    await tab.screenshot({ path: `test-results/widget/panel-firefox-${width}.png` });
  }
});
