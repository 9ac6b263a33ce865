import { describe, expect, it } from 'vitest';
import { anchorOf, CHUNK_CHARS, chunksOf } from './chunker.js';

const words = (n: number, word = 'harbour') => Array.from({ length: n }, (_, i) => `${word}${i}`).join(' ');

describe('chunks of a document', () => {
  it('cuts Markdown by its headings, keeping each passage’s heading path and section URL', () => {
    const chunks = chunksOf({
      title: 'Guest guide',
      format: 'markdown',
      url: 'https://hotel.example/guide#top',
      text: [
        'Welcome to the Harbor Hotel.',
        '',
        '# Dining',
        '',
        'Breakfast is served from 7 to 10:30',
        'in the garden room.',
        '',
        '## Room service',
        '',
        'Until midnight, from the menu in your room.',
        '',
        '# Spa & pool',
        '',
        '```',
        '# not a heading inside a fence',
        '```',
      ].join('\n'),
    });
    expect(chunks).toEqual([
      { position: 0, heading: '', url: 'https://hotel.example/guide#top', text: 'Welcome to the Harbor Hotel.' },
      {
        position: 1,
        heading: 'Dining',
        url: 'https://hotel.example/guide#dining',
        text: 'Breakfast is served from 7 to 10:30 in the garden room.',
      },
      {
        position: 2,
        heading: 'Dining › Room service',
        url: 'https://hotel.example/guide#room-service',
        text: 'Until midnight, from the menu in your room.',
      },
      {
        position: 3,
        heading: 'Spa & pool',
        url: 'https://hotel.example/guide#spa--pool',
        text: '``` # not a heading inside a fence ```',
      },
    ]);
  });

  it('gathers paragraphs up to 800 characters, cuts a longer one after its sentences (an endless one by length), and loses no word', () => {
    const paragraphs = Array.from({ length: 6 }, (_, i) => words(40, `p${i}w`));
    const long = Array.from({ length: 30 }, (_, i) => `Sentence ${i} is about the marina.`).join(' ');
    const endless = 'x'.repeat(2_000);
    const text = [...paragraphs, long, endless].join('\n\n');
    const chunks = chunksOf({ title: 'T', format: 'text', url: null, text });
    for (const chunk of chunks) expect(chunk.text.length).toBeLessThanOrEqual(CHUNK_CHARS);
    expect(chunks.length).toBeGreaterThan(5);
    const said = chunks
      .map((c) => c.text)
      .join(' ')
      .split(/\s+/);
    expect(said.join('')).toBe(text.split(/\s+/).join(''));
    expect(chunks.every((c) => c.heading === '' && c.url === null)).toBe(true);
  });

  it('makes the anchors sites make of headings', () => {
    expect(anchorOf('Check-in & Check-out')).toBe('check-in--check-out');
    expect(anchorOf('  Frühstück im Garten ')).toBe('frühstück-im-garten');
  });
});
