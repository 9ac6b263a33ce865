import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { browserSpeech } from './speech';

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
        getVoices: () => [{ name: 'Anna', voiceURI: 'urn:anna' }, { name: 'Moira', voiceURI: 'urn:moira' }],
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
    expect(queued[0]).toMatchObject({ text: 'Welcome.', lang: 'en-IE', voice: { name: 'Moira' }, rate: 1.25, pitch: 0.8 });
  });

  it("keeps the browser's own for what the agent leaves out, and holds rate and pitch to what the browser takes", () => {
    const speech = browserSpeech(win());
    speech.speak('One.', undefined, undefined);
    speech.speak('Two.', 'en-US', { name: 'Nobody', rate: 40, pitch: -1 });
    expect(queued.map((u) => [u.lang, u.voice, u.rate, u.pitch])).toEqual([
      ['', null, 1, 1],
      ['en-US', null, 10, 0],
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
