import { describe, expect, it } from 'vitest';
import { completeSentencesEnd, openSentenceEnd, sentencesOf, unspoken } from './sentences.js';

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

  it('finds sentence ends as the pattern it replaced did, in one walk however long a run of marks is', () => {
    // The rule as a regular expression: the reference, on short texts only (it backtracks on runs of marks).
    const reference = (text: string) => {
      let end = 0;
      for (const m of text.matchAll(/[.!?…]+["'”’)\]]*\s+|[。！？]+[」』”’）]*\s*/g)) {
        const stop = m.index! + m[0].length;
        if (stop === text.length && !/\s$/.test(m[0]) && /[。！？]/.test(m[0])) break;
        end = stop;
      }
      return end;
    };
    const alphabet = ['a', ' ', '.', '!', '?', '…', '"', ')', '。', '！', '」', '\n', '7'];
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
    for (let n = 0; n < 3_000; n++) {
      const text = Array.from({ length: next() % 24 }, () => alphabet[next() % alphabet.length]).join('');
      expect(completeSentencesEnd(text)).toBe(reference(text));
      // Looking again from where the marks still open begin finds the same end (blanks that came later aside).
      const cut = next() % (text.length + 1);
      const head = text.slice(0, cut);
      const from = Math.max(completeSentencesEnd(head), openSentenceEnd(head));
      const end = Math.max(completeSentencesEnd(head), completeSentencesEnd(text, from));
      expect(text.slice(0, end).trimEnd()).toBe(text.slice(0, reference(text)).trimEnd());
    }
    // A run of more than 32 marks is text, not a sentence's end.
    expect(sentencesOf(`Hi${'!'.repeat(32)} there. Then${'!'.repeat(33)} more`, false)).toEqual([
      `Hi${'!'.repeat(32)}`,
      'there.',
    ]);
    const started = performance.now();
    expect(completeSentencesEnd(`${'.'.repeat(200_000)}x`)).toBe(0);
    expect(openSentenceEnd(`Hi${'.'.repeat(200_000)}`)).toBe(200_002);
    expect(performance.now() - started).toBeLessThan(200);
  });
});
