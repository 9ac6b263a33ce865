import { describe, expect, it } from 'vitest';
import { ANCHOR_CHARS, anchorOf, CHUNK_CHARS, chunksOf, HEADING_PATH_CHARS } from './chunker.js';

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

  it('reads a heading line in one pass, however its blanks are laid out (a 3 KB line held the node 10 s)', () => {
    // `# a`, thousands of blanks, `b`: the old pattern backtracked cubically on it.
    for (const blanks of [3_000, 24_000]) {
      const started = performance.now();
      const [chunk] = chunksOf({
        title: 'T',
        format: 'markdown',
        url: 'https://hotel.example/guide',
        text: `# a${' '.repeat(blanks)}b\n\nBody.`,
      });
      expect(performance.now() - started).toBeLessThan(200);
      expect(chunk!.heading).toBe('a b');
      expect(chunk!.text).toBe('Body.');
    }
    const started = performance.now();
    chunksOf({ title: 'T', format: 'markdown', url: null, text: `## x {#${' '.repeat(50_000)}y` });
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('reads closing hashes and page anchors as CommonMark does: C# keeps its hash', () => {
    const headings = chunksOf({
      title: 'T',
      format: 'markdown',
      url: 'https://hotel.example/guide',
      text: ['# Parking ##', 'a', '', '## C#', 'b', '', '### Spa & pool {#spa}', 'c', '', '####### seven', 'd'].join(
        '\n',
      ),
    }).map((c) => [c.heading, c.url, c.text]);
    expect(headings).toEqual([
      ['Parking', 'https://hotel.example/guide#parking', 'a'],
      ['Parking › C#', 'https://hotel.example/guide#c', 'b'],
      // Seven hashes make no heading: a paragraph like any other.
      ['Parking › C# › Spa & pool', 'https://hotel.example/guide#spa', 'c\n\n####### seven d'],
    ]);
  });

  it('keeps headings, anchors and heading paths short, whatever the document says (a 100,000-character heading was stored in every passage)', () => {
    const long = 'harbour '.repeat(12_500);
    const chunks = chunksOf({
      title: 'T',
      format: 'markdown',
      url: 'https://hotel.example/guide',
      text: [`# ${long}`, `## ${long} {#${'x'.repeat(5_000)}}`, words(200), '', words(200)].join('\n'),
    });
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      expect(chunk.heading.length).toBeLessThanOrEqual(HEADING_PATH_CHARS);
      expect(chunk.url!.length).toBeLessThanOrEqual('https://hotel.example/guide#'.length + ANCHOR_CHARS);
    }
  });

  it('makes the anchors sites make of headings', () => {
    expect(anchorOf('Check-in & Check-out')).toBe('check-in--check-out');
    expect(anchorOf('  Frühstück im Garten ')).toBe('frühstück-im-garten');
  });
});
