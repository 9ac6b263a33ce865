import { isUtf8 } from 'node:buffer';
import { AppError } from '../../errors.js';
import type { DocumentFormat } from '../knowledge.table.js';
import { textOfHtml } from './html-text.js';
import { textOfPdf } from './pdf-text.js';

/** A document's text as it is kept and cut: plain or Markdown, whatever it came as. */
export interface DocumentContent {
  format: DocumentFormat;
  text: string;
  /** The title the content gives itself (an HTML `<title>`, a PDF's), or empty. */
  title: string;
}

/** How a format's kept text is cut: HTML is kept as Markdown. */
export const cutAs = (format: DocumentFormat): 'text' | 'markdown' =>
  format === 'markdown' || format === 'html' ? 'markdown' : 'text';

const refused = (path: string, message: string, detail: string) =>
  new AppError('invalid_request', message, [{ path, message: detail }]);

/** Text given as JSON, in `format`: an HTML page is read as a reader sees it, a sign-in page refused. */
export function contentOfText(format: Exclude<DocumentFormat, 'pdf'>, text: string, path = 'text'): DocumentContent {
  if (format !== 'html') return { format, text, title: '' };
  const page = textOfHtml(text);
  if (page.signInOnly)
    throw refused(
      path,
      'The page is a sign-in form, not the page meant',
      'it asks for a password and says next to nothing else: give a page open to everyone, or its text',
    );
  if (!page.markdown) throw refused(path, 'The page holds no text to answer from', 'no text outside scripts and menus');
  return { format, text: page.markdown, title: page.title };
}

const BY_EXTENSION: Record<string, DocumentFormat> = {
  txt: 'text',
  text: 'text',
  md: 'markdown',
  markdown: 'markdown',
  html: 'html',
  htm: 'html',
  pdf: 'pdf',
};
const BY_MEDIA_TYPE: Record<string, DocumentFormat> = {
  'text/plain': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
};

/** The format a file's name or media type says it is, if one we read. */
export function formatOf(name: string, mediaType: string): DocumentFormat | undefined {
  const extension = /\.([a-z]+)$/i.exec(name)?.[1]?.toLowerCase();
  return (
    (extension ? BY_EXTENSION[extension] : undefined) ?? BY_MEDIA_TYPE[mediaType.split(';', 1)[0]!.trim().toLowerCase()]
  );
}

/**
 * A file's or a page's bytes read as `format`; `path` names the field an error is about. A PDF is
 * read up to `maxChars` characters: a longer one is refused by its length all the same.
 */
export async function contentOfBytes(
  format: DocumentFormat,
  bytes: Uint8Array,
  path: string,
  maxChars: number,
): Promise<DocumentContent> {
  if (format === 'pdf') return { format, ...(await textOfPdf(bytes, maxChars)) };
  if (!isUtf8(bytes)) throw refused(path, 'The file is not UTF-8 text', `a ${format} file must be UTF-8`);
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  if (!text.trim()) throw refused(path, 'The file is empty', 'it holds no text');
  return contentOfText(format, text, path);
}
