import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Line } from '../session/transcript';
import { Player } from './player';

/**
 * The player's browser-voice half, and its fall-back to it: where no Web Audio exists (as here, and
 * in a browser with no audio device) the service's sentences are said by the browser's voice. The
 * audio half is driven in real Chromium and Firefox (e2e/service-voice.spec.ts, e2e/firefox.spec.ts).
 */
function playerWith(lines: Line[] = []) {
  const spoken: {
    text: string;
    language: string;
    progress: { boundary(i: number): void; end(said: boolean): void };
  }[] = [];
  let silenced = 0;
  const reports: unknown[] = [];
  const begun: unknown[] = [];
  const now = { language: 'en-US' };
  const player = new Player({
    speech: {
      speak: (text, language, _voice, progress) => void spoken.push({ text, language, progress: progress! }),
      silence: () => void silenced++,
    },
    voice: () => ({ language: now.language, voice: undefined, pronunciations: [{ term: 'Adlon', say: 'Ad-lonn' }] }),
    played: (at, state, offsetMs) => void reports.push({ ...at, state, offsetMs }),
    lines: () => lines,
    begins: (at, text, voice) => void begun.push({ sentence: at.sentence, text, voice }),
  });
  return { player, spoken, reports, begun, now, silenced: () => silenced };
}

describe('the widget’s player', () => {
  afterEach(() => vi.useRealTimers());

  it('says sentences one after another in the browser’s voice, pronounced, and reports each finished', () => {
    const { player, spoken, reports, begun } = playerWith();
    player.say({ turnId: 't1', sentence: 0 }, 'Welcome to the Adlon.');
    player.say({ turnId: 't1', sentence: 1 }, 'Breakfast is at seven.');
    // One at a time: the second waits for the first to end.
    expect(spoken.map((s) => s.text)).toEqual(['Welcome to the Ad-lonn.']);
    spoken[0]!.progress.end(true);
    expect(spoken.map((s) => s.text)).toEqual(['Welcome to the Ad-lonn.', 'Breakfast is at seven.']);
    spoken[1]!.progress.end(true);
    expect(reports).toEqual([
      { turnId: 't1', sentence: 0, state: 'finished', offsetMs: 'Welcome to the Adlon.'.length * 65 },
      { turnId: 't1', sentence: 1, state: 'finished', offsetMs: 'Breakfast is at seven.'.length * 65 },
    ]);
    expect(begun).toEqual([
      { sentence: 0, text: 'Welcome to the Adlon.', voice: 'browser' },
      { sentence: 1, text: 'Breakfast is at seven.', voice: 'browser' },
    ]);
  });

  it('says each sentence in the language it came in, though the visitor switches before it is said', () => {
    const { player, spoken, now } = playerWith();
    player.say({ turnId: 't1', sentence: 0 }, 'Hello!');
    player.say({ turnId: 't1', sentence: 1 }, 'How can I help with your stay?');
    now.language = 'de-DE';
    spoken[0]!.progress.end(true);
    player.say({ turnId: 't2', sentence: 0 }, 'Hallo!');
    spoken[1]!.progress.end(true);
    expect(spoken.map((s) => [s.text, s.language])).toEqual([
      ['Hello!', 'en-US'],
      ['How can I help with your stay?', 'en-US'],
      ['Hallo!', 'de-DE'],
    ]);
  });

  it('reports an interrupted sentence at its last word begun, drops the rest, and plays nothing more of that reply', () => {
    const { player, spoken, reports, silenced } = playerWith();
    player.say({ turnId: 't1', sentence: 0 }, 'Breakfast is served from seven.');
    player.say({ turnId: 't1', sentence: 1 }, 'Lunch too.');
    spoken[0]!.progress.boundary(13); // "served" begins
    player.stop();
    expect(silenced()).toBe(1);
    expect(reports).toEqual([{ turnId: 't1', sentence: 0, state: 'interrupted', offsetMs: 13 * 65 }]);
    // The end the browser fires after a cancel changes nothing; later sentences of that reply are not said.
    spoken[0]!.progress.end(false);
    player.say({ turnId: 't1', sentence: 2 }, 'Dinner at six.');
    player.say({ turnId: 't2', sentence: 0 }, 'A new reply.');
    expect(spoken.map((s) => s.text)).toEqual(['Breakfast is served from seven.', 'A new reply.']);
    expect(reports).toHaveLength(1);
  });

  it('says a sentence the service could not with the browser’s voice, read from the text shown', () => {
    const lines: Line[] = [{ key: 'rt1', who: 'agent', text: 'We have a room. It looks over the park.', turnId: 't1' }];
    const { player, spoken } = playerWith(lines);
    player.speech({ type: 'speech_unavailable', turn_id: 't1', sentence: 1 });
    expect(spoken.map((s) => s.text)).toEqual(['It looks over the park.']);
  });

  it('without Web Audio, says the service’s sentences in the browser’s voice instead', async () => {
    const { player, spoken } = playerWith();
    player.speech({ type: 'speech', turn_id: 't1', sentence: 0, text: 'Good evening.', sample_rate: 24_000 });
    player.audio(new ArrayBuffer(4_800));
    player.speech({ type: 'speech_end', turn_id: 't1', sentence: 0 });
    await vi.waitFor(() => expect(spoken.map((s) => s.text)).toEqual(['Good evening.']));
    player.speech({ type: 'speech', turn_id: 't1', sentence: 1, text: 'Sleep well.', sample_rate: 24_000 });
    player.speech({ type: 'speech_end', turn_id: 't1', sentence: 1 });
    spoken[0]!.progress.end(true);
    expect(spoken.map((s) => s.text)).toEqual(['Good evening.', 'Sleep well.']);
  });

  it('muted, says nothing and stops what it was saying', () => {
    const { player, spoken, reports } = playerWith();
    player.say({ turnId: 't1', sentence: 0 }, 'First.');
    player.muted = true;
    expect(reports).toEqual([{ turnId: 't1', sentence: 0, state: 'interrupted', offsetMs: 0 }]);
    player.say({ turnId: 't2', sentence: 0 }, 'Second.');
    expect(spoken.map((s) => s.text)).toEqual(['First.']);
    player.muted = false;
    player.say({ turnId: 't3', sentence: 0 }, 'Third.');
    expect(spoken.map((s) => s.text)).toEqual(['First.', 'Third.']);
  });
});
