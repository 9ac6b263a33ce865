/** A chunk holds at most this many characters: a passage a reply can quote, long enough to hold an answer. */
export const CHUNK_CHARS = 800;

/** A document's text as it was given. */
export interface SourceDocument {
  title: string;
  text: string;
  format: 'text' | 'markdown';
  url: string | null;
}

/** A passage of a document, where it sits (its headings), and the URL of its section where it has one. */
export interface Chunk {
  position: number;
  /** The headings above it, outermost first (`Rooms › Suites`); empty before the first. */
  heading: string;
  url: string | null;
  text: string;
}

interface Section {
  path: string[];
  anchor: string | null;
  paragraphs: string[];
}

/** The anchor a heading gets on most sites (GitHub's rule): lower case, spaces to dashes, punctuation gone. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-');
}

/** A heading holds at most this many characters (the rest cut with `…`): it is stored with every passage under it. */
export const HEADING_CHARS = 120;
/** A passage's heading path (`Rooms › Suites`), at most. */
export const HEADING_PATH_CHARS = 300;
/** A section's anchor, at most: a longer one is none (the document's URL alone). */
export const ANCHOR_CHARS = 100;

const isBlank = (char: string | undefined): boolean => char !== undefined && /\s/.test(char);

/** `text` cut to `max` characters, with `…` where it was cut (never inside a surrogate pair). */
export function capped(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = /[\uD800-\uDBFF]/.test(text[max - 2] ?? '') ? max - 2 : max - 1;
  return `${text.slice(0, cut).trimEnd()}…`;
}

interface Heading {
  depth: number;
  title: string;
  /** The page's own anchor, `{#id}` after the title (kept from an HTML page's heading ids). */
  id: string | undefined;
}

/**
 * An ATX heading as CommonMark reads one (`## Title ##`), by walking the line once: one to six `#`,
 * a blank, the title, then blanks and a closing run of `#` (after a blank) left out. No regular
 * expression runs on the line: a document's lines are anyone's (an upload, a fetched page), and a
 * pattern that backtracks held the node for seconds on one line of blanks.
 */
export function headingOf(line: string): Heading | undefined {
  let depth = 0;
  while (depth < line.length && line[depth] === '#') depth++;
  if (depth < 1 || depth > 6 || !isBlank(line[depth])) return undefined;
  let start = depth;
  while (isBlank(line[start])) start++;
  let end = line.length;
  while (end > start && isBlank(line[end - 1])) end--;
  let hashes = end;
  while (hashes > start && line[hashes - 1] === '#') hashes--;
  if (hashes < end && (hashes === start || isBlank(line[hashes - 1]))) {
    end = hashes;
    while (end > start && isBlank(line[end - 1])) end--;
  }
  if (end <= start) return undefined;
  let title = line.slice(start, end);
  let id: string | undefined;
  const open = title.endsWith('}') ? title.lastIndexOf('{#') : -1;
  if (open >= 0) {
    const candidate = title.slice(open + 2, -1);
    let plain = candidate.length > 0;
    for (let i = 0; plain && i < candidate.length; i++) plain = candidate[i] !== '}' && !isBlank(candidate[i]);
    if (plain) {
      id = candidate;
      title = title.slice(0, open).trimEnd();
    }
  }
  if (!title) return undefined;
  // Blanks inside a heading read as one, as a page shows them.
  return { depth, title: capped(title.replace(/\s+/g, ' '), HEADING_CHARS), id };
}

/** Markdown's sections: the text under each heading, its heading path kept. Plain text is one section. */
function sectionsOf(doc: SourceDocument): Section[] {
  const sections: Section[] = [{ path: [], anchor: null, paragraphs: [] }];
  const path: string[] = [];
  let paragraph: string[] = [];
  const close = () => {
    const text = paragraph.join(doc.format === 'markdown' ? ' ' : '\n').trim();
    if (text) sections.at(-1)!.paragraphs.push(text);
    paragraph = [];
  };
  let fenced = false;
  for (const line of doc.text.replace(/\r\n?/g, '\n').split('\n')) {
    if (doc.format === 'markdown' && /^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = doc.format === 'markdown' && !fenced ? headingOf(line) : undefined;
    if (heading) {
      close();
      path.length = Math.min(path.length, heading.depth - 1);
      path[heading.depth - 1] = heading.title;
      const anchor = heading.id ?? anchorOf(heading.title);
      sections.push({
        path: path.filter(Boolean),
        anchor: anchor && anchor.length <= ANCHOR_CHARS ? anchor : null,
        paragraphs: [],
      });
    } else if (!line.trim()) close();
    else paragraph.push(doc.format === 'markdown' ? line.trim() : line.trimEnd());
  }
  close();
  return sections.filter((s) => s.paragraphs.length);
}

/** A paragraph too long for one chunk, cut after sentences so each piece stays under the aim. */
function piecesOf(paragraph: string): string[] {
  if (paragraph.length <= CHUNK_CHARS) return [paragraph];
  const sentences = paragraph.match(/[^.!?。！？]+[.!?。！？]*\s*/g) ?? [paragraph];
  const pieces: string[] = [];
  let piece = '';
  for (const sentence of sentences) {
    if (piece && piece.length + sentence.length > CHUNK_CHARS) {
      pieces.push(piece.trim());
      piece = '';
    }
    // A "sentence" with no end at all is cut by length.
    if (sentence.length > CHUNK_CHARS) {
      for (let at = 0; at < sentence.length; at += CHUNK_CHARS)
        pieces.push(sentence.slice(at, at + CHUNK_CHARS).trim());
      continue;
    }
    piece += sentence;
  }
  if (piece.trim()) pieces.push(piece.trim());
  return pieces;
}

/**
 * A document cut into passages (README, Answers from your documents): by its headings first, then
 * by paragraphs gathered up to {@link CHUNK_CHARS} characters, a longer paragraph cut after its
 * sentences (a sentence longer still, by length). Each keeps its heading path and its section's URL (the document's, with the
 * heading's anchor). Nothing of the text is lost or repeated.
 */
export function chunksOf(doc: SourceDocument): Chunk[] {
  const chunks: Chunk[] = [];
  for (const section of sectionsOf(doc)) {
    const url = doc.url && section.anchor ? `${doc.url.replace(/#.*$/, '')}#${section.anchor}` : doc.url;
    let text = '';
    const flush = () => {
      if (text)
        chunks.push({
          position: chunks.length,
          heading: capped(section.path.join(' › '), HEADING_PATH_CHARS),
          url,
          text,
        });
      text = '';
    };
    for (const piece of section.paragraphs.flatMap(piecesOf)) {
      if (text && text.length + piece.length + 2 > CHUNK_CHARS) flush();
      text = text ? `${text}\n\n${piece}` : piece;
    }
    flush();
  }
  return chunks;
}
