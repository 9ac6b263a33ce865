import { describe, expect, it } from 'vitest';
import type { Passage } from '../../knowledge/knowledge-retrieval.js';
import { citationsOf, ShownText, withoutMarkers } from './citations.js';

const passage = (heading: string, text: string, url: string | null): Passage => ({
  chunk_id: heading,
  document_id: 'd',
  title: 'Guest guide',
  heading,
  url,
  text,
  score: 1,
});
const spa = passage(
  'Spa',
  'The sauna and the pool are open from 9 to 21. Towels wait at the spa desk.',
  'https://h.example/g#spa',
);
const parking = passage(
  'Parking',
  'The garage has forty spaces; a night costs 18 euros.',
  'https://h.example/g#parking',
);
const unlinked = passage('Notes', 'Quiet hours start at 22.', null);

describe("a model reply's citations", () => {
  it('are the passages it cites by number, each URL once, the numbers gone from what is shown', () => {
    const reply = 'Towels wait at the desk [1]. Parking is 18 euros [2,1]. Quiet after 22 [3]. And [9].';
    expect(citationsOf(reply, [spa, parking, unlinked])).toEqual([
      { type: 'link', label: 'Guest guide', url: 'https://h.example/g#spa' },
      { type: 'link', label: 'Guest guide', url: 'https://h.example/g#parking' },
    ]);
    expect(withoutMarkers(reply)).toBe('Towels wait at the desk. Parking is 18 euros. Quiet after 22. And.');
  });

  it('with no number, are the passage the reply was plainly made from, or none', () => {
    expect(citationsOf('The sauna and the pool open at 9; towels are at the spa desk.', [parking, spa])).toEqual([
      { type: 'link', label: 'Guest guide', url: 'https://h.example/g#spa' },
    ]);
    expect(citationsOf('Hello! How can I help you today?', [parking, spa])).toEqual([]);
    expect(citationsOf('Anything else?', [])).toEqual([]);
  });

  it('are found in one walk, however many blanks there are (60,000 blanks held the node 6 s)', () => {
    const started = performance.now();
    const reply = `Towels${' '.repeat(60_000)}x [1${' '.repeat(60_000)}, 2 [3]`;
    expect(withoutMarkers(reply)).toBe(`Towels${' '.repeat(60_000)}x [1${' '.repeat(60_000)}, 2`);
    expect(citationsOf(reply, [spa, parking, unlinked])).toEqual([]);
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('leave a streamed reply as they leave it whole, however the reply is cut into pieces', () => {
    const replies = [
      'Towels wait at the desk [1]. Parking is 18 euros [2,1]. Quiet after 22 [3]. And [9].',
      'No [marker here], [123] nor [1 2]; but [ 1] stays and   [4 ,  5] goes.',
      `Blanks${' '.repeat(200)}[1] and a last [2`,
    ];
    for (const reply of replies)
      for (const size of [1, 2, 3, 5, 8, 13]) {
        const shown = new ShownText();
        for (let at = 0; at < reply.length; at += size) {
          shown.push(reply.slice(at, at + size));
          expect(shown.text).toBe(withoutMarkers(reply.slice(0, at + size)));
        }
      }
  });
});
