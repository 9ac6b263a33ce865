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
    const heading = doc.format === 'markdown' && !fenced ? /^(#{1,6})\s+(.+?)\s*#*\s*$/.exec(line) : null;
    if (heading) {
      close();
      const depth = heading[1]!.length;
      path.length = Math.min(path.length, depth - 1);
      // `## Title {#id}`: the page's own anchor for it (kept from an HTML page's heading ids).
      const [, title, id] = /^(.*?)(?:\s*\{#([^}\s]+)\})?$/.exec(heading[2]!)!;
      path[depth - 1] = title!;
      sections.push({ path: path.filter(Boolean), anchor: id ?? anchorOf(title!), paragraphs: [] });
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
      if (text) chunks.push({ position: chunks.length, heading: section.path.join(' › '), url, text });
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
