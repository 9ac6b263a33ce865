import { describe, expect, it } from 'vitest';
import type { Passage } from '../../knowledge/knowledge.service.js';
import { citationsOf, withoutMarkers } from './citations.js';

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
});
