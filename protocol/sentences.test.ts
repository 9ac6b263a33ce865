import { describe, expect, it } from 'vitest';
import { sentencesOf, unspoken } from './sentences.js';

describe('sentences of a reply', () => {
  it('ends a sentence at . ! ? … followed by whitespace; streamed text keeps its unfinished rest for later', () => {
    expect(sentencesOf('Hello! Breakfast is at 7. Is that', false)).toEqual(['Hello!', 'Breakfast is at 7.']);
    // No whitespace after the last stop yet: the next part may go on ("7.30").
    expect(sentencesOf('It opens at 7.', false)).toEqual([]);
    expect(sentencesOf('It opens at 7.30 sharp. Really?! Yes… ', false)).toEqual([
      'It opens at 7.30 sharp.',
      'Really?!',
      'Yes…',
    ]);
    expect(sentencesOf('He said "fine." Then left', false)).toEqual(['He said "fine."']);
  });

  it('ends CJK sentences at 。！？ without a space, and the final reply completes the rest', () => {
    expect(sentencesOf('你好。请问有什么需要？我们', false)).toEqual(['你好。', '请问有什么需要？']);
    expect(sentencesOf('你好。请问有什么需要？我们', true)).toEqual(['你好。', '请问有什么需要？', '我们']);
    expect(sentencesOf('朝食は7時からです。', false)).toEqual([]);
    expect(sentencesOf('朝食は7時からです。', true)).toEqual(['朝食は7時からです。']);
    expect(sentencesOf('Ends here.', true)).toEqual(['Ends here.']);
    expect(sentencesOf('  ', true)).toEqual([]);
  });

  it('hands out each sentence once by position: a sentence said is not said again, even reworded by the final reply', () => {
    let spoken = 0;
    const said: string[] = [];
    const hear = (text: string, final: boolean) => {
      const next = unspoken(text, final, spoken);
      spoken = next.spoken;
      said.push(...next.sentences);
    };
    hear('Breakfast is ', false);
    hear('Breakfast is from 7. It', false);
    hear('Breakfast is from 7. It ends at 10. ', false);
    hear('Breakfast runs from 7. It ends at 10. Enjoy!', true);
    expect(said).toEqual(['Breakfast is from 7.', 'It ends at 10.', 'Enjoy!']);
    // A final reply shorter than what was said adds nothing.
    expect(unspoken('Short.', true, 3)).toEqual({ sentences: [], spoken: 3 });
  });
});
