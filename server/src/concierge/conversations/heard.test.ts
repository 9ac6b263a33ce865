import { describe, expect, it } from 'vitest';
import { SPOKEN_MS_PER_CHAR } from '#protocol/sentences';
import { heardOf } from './heard.js';

describe('what the visitor heard of a reply', () => {
  const said = [
    { text: 'We have a room.', durationMs: 1_000 },
    { text: 'It looks over the park and the river.', durationMs: 2_000 },
  ];

  it('is every sentence up to a finished one, whole', () => {
    expect(heardOf(said, 0, 1_000, 'finished')).toEqual({ text: 'We have a room.', interrupted: false });
    expect(heardOf(said, 1, 2_000, 'finished')).toEqual({
      text: 'We have a room. It looks over the park and the river.',
      interrupted: false,
    });
  });

  it('cuts an interrupted sentence at the last word boundary before the offset, in proportion to its audio', () => {
    // Half of 38 characters is 19, inside "park": the words before it were heard.
    expect(heardOf(said, 1, 1_000, 'interrupted')).toEqual({
      text: 'We have a room. It looks over the',
      interrupted: true,
    });
    expect(heardOf(said, 0, 0, 'interrupted')).toEqual({ text: '', interrupted: true });
    expect(heardOf(said, 1, 9_000, 'interrupted')!.text).toBe('We have a room. It looks over the park and the river.');
    // A boundary exactly at the offset keeps the word before it.
    expect(heardOf([{ text: 'ab cd', durationMs: 500 }], 0, 200, 'interrupted')!.text).toBe('ab');
  });

  it("reckons the browser's voice, which has no clock, by characters", () => {
    const browser = [{ text: 'Breakfast is served from seven.' }];
    expect(heardOf(browser, 0, 13 * SPOKEN_MS_PER_CHAR, 'interrupted')!.text).toBe('Breakfast is');
  });

  it('knows nothing of a sentence it never said', () => {
    expect(heardOf(said, 2, 0, 'finished')).toBeUndefined();
  });
});
