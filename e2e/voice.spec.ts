import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CHROMIUM } from './chromium.js';
import { conversation, expect, launcher, scriptedSpeech, spoken, test } from './fixtures.js';
import { HEARD } from './stack.js';

/**
 * A visitor's voice recognised by the service (README, Voice in every browser): Chromium's fake
 * microphone plays a WAV of espeak-ng saying a question followed by quiet, the widget captures it
 * through its AudioWorklet, and the stack's recogniser hears it.
 */
function spokenQuestion(): string {
  const dir = mkdtempSync(join(tmpdir(), 'concierge-voice-'));
  const file = join(dir, 'question.wav');
  const made = spawnSync('espeak-ng', ['-w', file, 'When is breakfast?']);
  if (made.status !== 0) throw new Error(`espeak-ng: ${made.stderr}`);
  // Two seconds of quiet after the words: the widget ends the utterance by itself after 0.8 s.
  const wav = readFileSync(file);
  const rate = wav.readUInt32LE(24);
  const quiet = Buffer.alloc(rate * 2 * 2);
  const whole = Buffer.concat([wav, quiet]);
  whole.writeUInt32LE(whole.length - 8, 4);
  whole.writeUInt32LE(whole.length - 44, 40);
  writeFileSync(file, whole);
  return file;
}

const installed = spawnSync('sh', ['-c', 'command -v espeak-ng']).status === 0;
test.skip(!installed, 'espeak-ng is not installed (apt-get install espeak-ng)');
test.use({
  launchOptions: {
    executablePath: CHROMIUM.executablePath,
    args: [
      ...CHROMIUM.args,
      '--use-fake-device-for-media-stream',
      '--use-fake-ui-for-media-stream',
      ...(installed ? [`--use-file-for-fake-audio-capture=${spokenQuestion()}`] : []),
    ],
  },
});

test.afterEach(async ({ stack }) => {
  await stack.recogniseSpeech('auto');
  await stack.synthesiseSpeech('browser');
  await stack.voiceMode(undefined);
});

test('Chromium forced to the service: the mic press streams the question, the service hears it, the turn shows and its reply is spoken', async ({
  page,
  stack,
}) => {
  await stack.recogniseSpeech('service');
  // Press to talk: one press per question, its end found by the widget (hands-free has its own test below).
  await stack.voiceMode('push_to_talk');
  await stack.behave('sync');
  // The browser's own recognition is scripted away: only the service may hear this visitor.
  await scriptedSpeech(page, { fail: 'not-allowed' });
  const uploads = stack.transcriber.uploads.length;
  await page.goto(stack.demoUrl);
  await launcher(page).click();
  await page.getByRole('button', { name: 'Speak' }).click();
  await expect(conversation(page).getByText(HEARD)).toBeVisible({ timeout: 15_000 });
  // The reply to a spoken turn is read out, and shown.
  await expect.poll(async () => (await spoken(page)).length, { timeout: 10_000 }).toBeGreaterThan(0);
  await expect(conversation(page).getByText((await spoken(page))[0]!.text)).toBeVisible();
  const upload = stack.transcriber.uploads[uploads]!;
  expect(upload.wav).toMatchObject({ sampleRate: 16000, channels: 1, bitsPerSample: 16 });
  // The words and then 0.8 s of quiet: more than a second of audio, less than the file's loop.
  expect(upload.wav.dataBytes).toBeGreaterThan(32_000);
  expect(upload.wav.dataBytes).toBeLessThan(32_000 * 5);
});

test('Chromium hands-free: one press; the question found in the open mic and answered aloud; the question again over the reply stops it where the visitor heard it; a second press closes the mic', async ({
  page,
  stack,
}) => {
  await stack.recogniseSpeech('service');
  await stack.synthesiseSpeech('service');
  await stack.behave('no_reply');
  await scriptedSpeech(page, { fail: 'not-allowed' });
  const uploads = stack.transcriber.uploads.length;
  await page.goto(stack.demoUrl);
  await page.evaluate(() => {
    const w = window as unknown as {
      __listening: string[];
      __played: unknown[];
      Concierge: { on(name: string, handler: (e: any) => void): void };
    };
    w.__listening = [];
    w.__played = [];
    w.Concierge.on('listening', (e) => w.__listening.push(e.frame.type));
    w.Concierge.on('playback', (e) => w.__played.push(e));
  });
  const asked = await stack.hookCalls(HEARD);
  await launcher(page).click();
  await expect(page.getByText('Connecting')).toHaveCount(0);
  await page.getByRole('button', { name: 'Speak' }).click();
  const mic = page.getByRole('button', { name: 'Stop listening' });
  await expect(mic).toHaveAttribute('aria-pressed', 'true');
  // The fake microphone loops the question and two seconds of quiet: the service finds where it ends.
  await expect(page.getByRole('status').filter({ hasText: /Listening…|Hearing you…|Thinking…/ })).toBeVisible();
  await expect.poll(() => stack.hookCalls(HEARD), { timeout: 15_000 }).toBeGreaterThan(asked);
  await expect(conversation(page).getByText(HEARD).first()).toBeVisible();
  const listened = () => page.evaluate(() => (window as unknown as { __listening: string[] }).__listening);
  expect(await listened()).toEqual(expect.arrayContaining(['speech_started', 'speech_stopped', 'transcript_partial']));
  expect(stack.transcriber.uploads.length).toBeGreaterThan(uploads);
  await page.screenshot({ path: 'test-results/widget/hands-free.png' });

  // A long reply, spoken by the service; the question comes round again over it and stops it.
  const turn = await stack.hookedTurn(HEARD);
  const long =
    'Our rooms all look over the harbour, each with a deep bath, a desk by the window, a kettle, a small library of books about the coast, a record player with a few old records, heavy curtains for the long summer evenings, and a balcony where the morning sun comes in over the water before breakfast.';
  expect(await stack.reply(turn, { reply_text: long })).toBe(202);
  await expect.poll(listened, { timeout: 20_000 }).toContain('interrupt');
  const played = () =>
    page.evaluate(() => (window as unknown as { __played: { turnId: string; state: string }[] }).__played);
  await expect.poll(played).toContainEqual(expect.objectContaining({ turnId: turn.turn_id, state: 'interrupted' }));
  await expect.poll(() => stack.heard(turn)).toMatchObject({ interrupted: true });
  const heard = (await stack.heard(turn))!.text;
  expect(long.startsWith(heard) && heard.length < long.length).toBe(true);

  await mic.click();
  await expect(page.getByRole('button', { name: 'Speak' })).toHaveAttribute('aria-pressed', 'false');
  await expect(page.locator('.open-mic')).toHaveCount(0);
});

test("Chromium's own recognition beside a fake microphone: its audio-capture failure hands the press to the service, which hears it; never 'No microphone was found'", async ({
  page,
  stack,
}) => {
  await stack.behave('sync');
  // Debian's Chromium recognises through its maker's service, which it cannot reach, and captures
  // its own audio apart from getUserMedia: it fails with audio-capture though the fake microphone works.
  const uploads = stack.transcriber.uploads.length;
  await page.goto(stack.demoUrl);
  await launcher(page).click();
  await page.getByRole('button', { name: 'Speak' }).click();
  await expect(conversation(page).getByText(HEARD)).toBeVisible({ timeout: 15_000 });
  expect(stack.transcriber.uploads.length).toBeGreaterThan(uploads);
  await expect(page.getByText('No microphone was found')).toHaveCount(0);
  await page.screenshot({ path: 'test-results/widget/voice-fallback.png' });
});

test("Chromium's own recognition failing where the deployment takes the browser's only: voice is said not to work here, not that there is no microphone", async ({
  page,
  stack,
}) => {
  await stack.recogniseSpeech('browser');
  await page.goto(stack.demoUrl);
  await launcher(page).click();
  await page.getByRole('button', { name: 'Speak' }).click();
  await expect(page.getByRole('alert')).toHaveText('Voice input is not working right now. Type your message instead.');
  await expect(page.getByText('No microphone was found')).toHaveCount(0);
  // Said in the language the visitor chooses next, as the rest of the panel is.
  await page.getByRole('combobox', { name: 'Language of the conversation' }).selectOption('de-DE');
  await expect(page.getByRole('alert')).toHaveText(
    'Die Spracheingabe funktioniert gerade nicht. Schreiben Sie Ihre Nachricht stattdessen.',
  );
});

test('Chromium with recognition off: no mic, text still works', async ({ page, stack }) => {
  await stack.recogniseSpeech('off');
  await scriptedSpeech(page, {});
  await page.goto(stack.demoUrl);
  await launcher(page).click();
  await expect(page.getByRole('textbox', { name: 'Your message' })).toBeVisible();
  await expect(page.getByRole('button', { name: 'Speak' })).toHaveCount(0);
});
