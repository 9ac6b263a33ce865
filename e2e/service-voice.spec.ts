import type { Page } from '@playwright/test';
import { conversation, expect, launcher, scriptedSpeech, spoken, test } from './fixtures.js';

/**
 * The agent's own voice (README, The agent's own voice) in real Chromium: the service synthesises
 * each sentence (the stack's speech server streams a tone, 20 ms a character), the widget's
 * AudioWorklet plays it through an <audio> element, and what the worklet counted played comes back
 * as `playback` events and, on the service, as what the visitor heard.
 */
interface Played {
  turnId: string;
  sentence: number;
  state: 'finished' | 'interrupted';
  offsetMs: number;
  at: number;
}

/** The page's `playback` events, and when (performance.now()) the visitor last pressed the mic. */
async function watchPlayback(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as {
      __played: unknown[];
      __pressedAt: number;
      Concierge: { on(name: string, handler: (e: Record<string, unknown>) => void): void };
    };
    w.__played = [];
    w.Concierge.on('playback', (e) => w.__played.push({ ...e, at: performance.now() }));
    // Capture phase: the moment of the press, before the widget acts on it.
    document.addEventListener('pointerdown', () => (w.__pressedAt = performance.now()), { capture: true });
  });
}

const played = (page: Page) => page.evaluate(() => (window as unknown as { __played: Played[] }).__played);
const pressedAt = (page: Page) => page.evaluate(() => (window as unknown as { __pressedAt: number }).__pressedAt);

test.afterEach(async ({ stack }) => {
  await stack.synthesiseSpeech('browser');
});

test("Chromium: a streamed reply to a spoken question is said in the service's voice, each sentence played to its last sample", async ({
  page,
  stack,
}) => {
  await stack.synthesiseSpeech('service');
  await stack.behave('stream', 100);
  await scriptedSpeech(page, { words: ['When is breakfast?'] });
  const calls = stack.synthesiser.calls.length;
  await page.goto(stack.demoUrl);
  await watchPlayback(page);
  await launcher(page).click();
  await page.getByRole('button', { name: 'Speak' }).click();
  await expect(conversation(page).getByText(/Breakfast is served from 7/)).toBeVisible({ timeout: 10_000 });
  await expect.poll(async () => (await played(page)).length, { timeout: 15_000 }).toBe(1);
  const said = stack.synthesiser.calls.slice(calls).map((c) => String(c.body.input));
  expect(said).toEqual(['Breakfast is served from 7 to 10:30 in the garden room, on weekends until 11.']);
  // Every sample the service sent was played: 20 ms a character, counted by the worklet.
  expect((await played(page)).map(({ sentence, state, offsetMs }) => ({ sentence, state, offsetMs }))).toEqual([
    { sentence: 0, state: 'finished', offsetMs: said[0]!.length * 20 },
  ]);
  // The service's voice spoke: the browser's said nothing.
  expect(await spoken(page)).toEqual([]);
  await expect(page.getByRole('button', { name: 'Mute the voice' })).toHaveAttribute('aria-pressed', 'false');
  await page.screenshot({ path: 'test-results/widget/service-voice.png' });
});

test("Chromium: the QA panel shows each sentence of the agent's voice as it begins and how far it was heard", async ({
  page,
  stack,
}) => {
  await stack.synthesiseSpeech('service');
  await stack.behave('sync');
  await scriptedSpeech(page, { words: ['When is breakfast?'] });
  await page.goto(`${stack.demoUrl}/qa`);
  await launcher(page).click();
  await page.getByRole('button', { name: 'Speak' }).click();
  const voice = page.locator('#qa-wire li[data-kind="voice"]');
  await expect(voice.filter({ hasText: /says sentence 0 in the service's voice: Breakfast is served/ })).toHaveCount(
    1,
    {
      timeout: 10_000,
    },
  );
  await expect(voice.filter({ hasText: /sentence 0 finished at \d+ ms/ })).toHaveCount(1, { timeout: 10_000 });
  await page.screenshot({ path: 'test-results/widget/qa-voice.png' });
});

test('Chromium: a mic press mid-reply stops the voice within 100 ms, and the service keeps what was heard', async ({
  page,
  stack,
}) => {
  await stack.synthesiseSpeech('service');
  await stack.behave('no_reply');
  await scriptedSpeech(page, { words: ['Tell me about the rooms'] });
  await page.goto(stack.demoUrl);
  await watchPlayback(page);
  await launcher(page).click();
  await page.getByRole('button', { name: 'Speak' }).click();
  const turn = await stack.hookedTurn('Tell me about the rooms');
  const first =
    'All twenty four rooms look over the harbour, and each has a deep bath, a desk by the window and a kettle.';
  expect(await stack.reply(turn, { reply_text: `${first} Breakfast is included.` })).toBe(202);
  await expect(conversation(page).getByText(/deep bath/)).toBeVisible();
  // The first sentence lasts 2 s; the visitor speaks a second into it.
  await page.waitForTimeout(1_200);
  await page.getByRole('button', { name: 'Speak' }).click();
  await expect.poll(async () => (await played(page)).length).toBe(1);
  const [cut] = await played(page);
  expect(cut).toMatchObject({ turnId: turn.turn_id, sentence: 0, state: 'interrupted' });
  expect(cut!.offsetMs).toBeGreaterThan(500);
  expect(cut!.offsetMs).toBeLessThan(2_000);
  expect(cut!.at - (await pressedAt(page))).toBeLessThan(100);
  // What was heard: the words wholly within the offset, in proportion to the sentence's length.
  await expect.poll(() => stack.heard(turn)).toMatchObject({ interrupted: true });
  const text = (await stack.heard(turn))!.text;
  const chars = Math.floor(first.length * (cut!.offsetMs / (first.length * 20)));
  expect(first.startsWith(text)).toBe(true);
  expect(text.length).toBeLessThanOrEqual(chars);
  expect(text.length).toBeGreaterThan(chars - 12);
  // Nothing more of that reply is played after the press.
  await page.waitForTimeout(500);
  expect(await played(page)).toHaveLength(1);
});

test('Chromium: muted, the voice says nothing, and unmuted it speaks again', async ({ page, stack }) => {
  await stack.synthesiseSpeech('service');
  await stack.behave('sync');
  await scriptedSpeech(page, { words: ['When is breakfast?'] });
  await page.goto(stack.demoUrl);
  await watchPlayback(page);
  await launcher(page).click();
  const mute = page.getByRole('button', { name: 'Mute the voice' });
  await mute.click();
  await expect(mute).toHaveAttribute('aria-pressed', 'true');
  await page.getByRole('button', { name: 'Speak' }).click();
  await expect(conversation(page).getByText(/Breakfast is served from 7/)).toBeVisible();
  await page.waitForTimeout(2_500);
  expect(await played(page)).toEqual([]);
  await mute.click();
  await expect(mute).toHaveAttribute('aria-pressed', 'false');
  await page.getByRole('button', { name: 'Speak' }).click();
  await expect.poll(async () => (await played(page)).map((p) => p.state), { timeout: 10_000 }).toEqual(['finished']);
});
