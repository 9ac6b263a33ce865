import { describe, expect, it } from 'vitest';
import { WIDGET_LOCALES } from '#protocol/widget-locales';
import {
  END_OF_TURN_DEFAULTS,
  endOfTurnSilenceMs,
  onlyBackchannel,
  onlyEcho,
  turnTakingWordsOf,
} from './turn-taking.js';

describe('the end of a spoken turn (README, Voice in every browser)', () => {
  it('comes after the usual quiet for a finished sentence', () => {
    expect(endOfTurnSilenceMs('Where can I park my car?', 'en-US')).toBe(600);
    expect(endOfTurnSilenceMs('Wo kann ich parken?', 'de-DE')).toBe(600);
  });

  it('waits longest when the words look unfinished: a conjunction, a filler, a number or a name being spelled', () => {
    for (const [words, language] of [
      ['I would like a table for two and', 'en-GB'],
      ['I would like a table for two, um…', 'en'],
      ['My number is 0 6 1 2', 'en'],
      ['my email is anna at', 'en'],
      ['it is spelled M U E', 'en'],
      ['Ich hätte gern ein Zimmer und', 'de'],
      ['Je voudrais une chambre, euh', 'fr-FR'],
      ['Quiero una habitación pero', 'es'],
      ['部屋を予約したいんですけど', 'ja'],
      ['我想订一个房间，然后', 'zh-Hans'],
    ])
      expect({ words, wait: endOfTurnSilenceMs(words!, language!) }).toEqual({ words, wait: 2_000 });
  });

  it('is sooner after a whole turn of yes or no', () => {
    expect(endOfTurnSilenceMs('Yes.', 'en')).toBe(300);
    expect(endOfTurnSilenceMs('nein', 'de')).toBe(300);
    expect(endOfTurnSilenceMs('はい', 'ja')).toBe(300);
    // "Yes, and…" is not a whole turn of yes.
    expect(endOfTurnSilenceMs('Yes, and', 'en')).toBe(2_000);
  });

  it("scales with the agent's eagerness", () => {
    const eager = { ...END_OF_TURN_DEFAULTS, eagerness: 'eager' as const };
    const patient = { ...END_OF_TURN_DEFAULTS, eagerness: 'patient' as const, silence_ms: 800 };
    expect(endOfTurnSilenceMs('When is breakfast?', 'en', eager)).toBe(360);
    expect(endOfTurnSilenceMs('When is breakfast?', 'en', patient)).toBe(1_200);
    expect(endOfTurnSilenceMs('and', 'en', patient)).toBe(3_000);
  });

  it("knows the words of each of the widget's languages, and reads another as English", () => {
    for (const locale of WIDGET_LOCALES) {
      const { language, words } = turnTakingWordsOf(locale);
      expect(language).toBe(locale.split('-')[0]);
      expect(words.unfinished.length && words.shortAnswers.length && words.backchannels.length).toBeGreaterThan(0);
    }
    expect(turnTakingWordsOf('sw-KE').language).toBe('en');
  });
});

describe('a backchannel over the agent', () => {
  it('is only someone listening: "mm-hm", "uh huh", "yeah, okay", in any spelling of spaces and hyphens', () => {
    for (const words of ['mm-hm', 'Mm hm.', 'mhm', 'Uh-huh', 'uh huh', 'Yeah, okay.', 'right right', 'I see'])
      expect({ words, ignored: onlyBackchannel(words, 'en-US') }).toEqual({ words, ignored: true });
    expect(onlyBackchannel('genau', 'de')).toBe(true);
    expect(onlyBackchannel("d'accord", 'fr')).toBe(true);
    expect(onlyBackchannel('ага', 'ru')).toBe(true);
    expect(onlyBackchannel('嗯嗯', 'zh-Hans')).toBe(true);
  });

  it('is not a turn that says something, nor nothing at all', () => {
    for (const words of ['yeah but what about parking', 'no', 'stop', 'wait', '', '…'])
      expect({ words, ignored: onlyBackchannel(words, 'en') }).toEqual({ words, ignored: false });
    expect(onlyBackchannel('ja, aber wo?', 'de')).toBe(false);
  });

  it("follows the agent's own list where it gives one", () => {
    expect(onlyBackchannel('yeah', 'en', ['mm-hm'])).toBe(false);
    expect(onlyBackchannel('mm-hm', 'en', ['mm-hm'])).toBe(true);
  });

  it('takes words that are all in what the agent is saying for its own voice coming back, and nothing else', () => {
    const saying = 'Our rooms all face the garden, and each has a balcony.';
    expect(onlyEcho('face the Garden and each', saying)).toBe(true);
    expect(onlyEcho('how much is the balcony room', saying)).toBe(false);
    expect(onlyEcho('', saying)).toBe(false);
    expect(onlyEcho('garden', '')).toBe(false);
  });
});
