import { AppError } from '../../errors.js';
import { type Chunk, chunksOf } from '../chunker.js';
import type { DocumentFormat } from '../knowledge.table.js';
import { contentOfBytes, contentOfText, cutAs, type DocumentContent } from './document-content.js';

/** A document to read: its text or bytes as given, or the text kept from an earlier read (cut again). */
export interface ReadJob {
  format: DocumentFormat;
  source: { text: string } | { bytes: Uint8Array } | { kept: string };
  /** The request field an error is about (`text`, `file`, `url`). */
  path: string;
  /** The document's URL: each passage links to its section of it. */
  url: string | null;
  /** Characters a document may have: a longer one is refused, naming its length. */
  maxChars: number;
}

/** What a read gives: the document's text, its length in code points, and its passages. */
export interface ReadDocument {
  content: DocumentContent;
  chars: number;
  chunks: Chunk[];
}

/**
 * A document read and cut into passages (README, Answers from your documents). Runs in a reading
 * thread (see DocumentReader), never on the service's event loop: its input is anyone's.
 */
export async function readDocument(job: ReadJob): Promise<ReadDocument> {
  const { format, source, path } = job;
  const content: DocumentContent =
    'kept' in source
      ? { format, text: source.kept, title: '' }
      : 'text' in source
        ? contentOfText(format === 'pdf' ? 'text' : format, source.text, path)
        : await contentOfBytes(format, source.bytes, path, job.maxChars);
  let chars = 0;
  for (const _ of content.text) chars++;
  if (chars > job.maxChars)
    throw new AppError('invalid_request', 'The document is too long', [
      {
        path,
        message: `its text is ${chars.toLocaleString('en')} characters; at most ${job.maxChars.toLocaleString('en')}`,
      },
    ]);
  const chunks = chunksOf({ title: '', text: content.text, format: cutAs(content.format), url: job.url });
  return { content, chars, chunks };
}
