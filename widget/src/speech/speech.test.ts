import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { browserSpeech, voiceFor } from './speech';

/** The browser's synthesiser as the widget uses it: the utterances it is given, and its voices. */
class Utterance {
  lang = '';
  voice: { name: string } | null = null;
  rate = 1;
  pitch = 1;
  constructor(readonly text: string) {}
}

describe("the agent's voice", () => {
  let queued: Utterance[];
  let cancelled: number;
  const win = () =>
    ({
      speechSynthesis: {
        speak: (u: Utterance) => void queued.push(u),
        cancel: () => void cancelled++,
        getVoices: () => [
          { name: 'Anna', voiceURI: 'urn:anna', lang: 'de-DE', default: false },
          { name: 'Moira', voiceURI: 'urn:moira', lang: 'en-IE', default: false },
        ],
      },
    }) as unknown as Window;

  beforeEach(() => {
    queued = [];
    cancelled = 0;
    (globalThis as Record<string, unknown>).SpeechSynthesisUtterance = Utterance;
  });
  afterEach(() => {
    delete (globalThis as Record<string, unknown>).SpeechSynthesisUtterance;
  });

  it('speaks with the agent voice’s name, rate and pitch, in its language', () => {
    browserSpeech(win()).speak('Welcome.', 'en-IE', { name: 'Moira', rate: 1.25, pitch: 0.8 });
    expect(queued).toHaveLength(1);
    expect(queued[0]).toMatchObject({
      text: 'Welcome.',
      lang: 'en-IE',
      voice: { name: 'Moira' },
      rate: 1.25,
      pitch: 0.8,
    });
  });

  it("takes the best voice for the language when the agent's does not speak it, and holds rate and pitch to what the browser takes", () => {
    const speech = browserSpeech(win());
    speech.speak('Eins.', 'de-AT', { name: 'Moira' });
    speech.speak('Two.', 'en-US', { name: 'Nobody', rate: 40, pitch: -1 });
    speech.speak('Un.', 'fr-FR', undefined);
    expect(queued.map((u) => [u.lang, u.voice?.name, u.rate, u.pitch])).toEqual([
      ['de-AT', 'Anna', 1, 1],
      ['en-US', 'Moira', 10, 0],
      ['fr-FR', undefined, 1, 1],
    ]);
  });

  it('queues sentence after sentence, and silence stops them all', () => {
    const speech = browserSpeech(win());
    speech.speak('First.', 'en-US', undefined);
    speech.speak('Second.', 'en-US', undefined);
    expect([queued.map((u) => u.text), cancelled]).toEqual([['First.', 'Second.'], 0]);
    speech.silence();
    expect(cancelled).toBe(1);
  });
});

describe('the best voice for a language', () => {
  const voice = (name: string, lang: string, isDefault = false) =>
    ({ name, voiceURI: `urn:${name}`, lang, default: isDefault }) as SpeechSynthesisVoice;
  const voices = [
    voice('Thomas', 'fr-FR', true),
    voice('Amélie', 'fr-CA'),
    voice('Microsoft Denise Online (Natural) - French (France)', 'fr-FR'),
    voice('Google Deutsch', 'de_DE'),
    voice('Daniel', 'en-GB'),
  ];

  it('prefers the exact tag, then a natural-sounding voice, then the default', () => {
    expect(voiceFor(voices, 'fr-FR', undefined)?.name).toBe('Microsoft Denise Online (Natural) - French (France)');
    expect(voiceFor(voices, 'fr-CA', undefined)?.name).toBe('Amélie');
    expect(voiceFor([voices[0]!, voices[1]!], 'fr-BE', undefined)?.name).toBe('Thomas');
  });

  it("reads Android's underscores, takes the agent's voice only when it speaks the language, and finds none for a language no voice speaks", () => {
    expect(voiceFor(voices, 'de-DE', 'Daniel')?.name).toBe('Google Deutsch');
    expect(voiceFor(voices, 'en-US', 'Daniel')?.name).toBe('Daniel');
    expect(voiceFor(voices, 'fr-FR', 'Amélie')?.name).toBe('Amélie');
    expect(voiceFor(voices, 'ja-JP', undefined)).toBeUndefined();
  });
});
