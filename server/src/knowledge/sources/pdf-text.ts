import { AppError } from '../../errors.js';
import { checkPdfStreams, PdfRefused } from './pdf-streams.js';

/** A PDF's text, a page a paragraph, and its own title where it names one. */
export interface PdfText {
  title: string;
  text: string;
}

/** Pages of a PDF read at most: a brochure or a manual, not a library. */
export const PDF_PAGES = 2_000;

const refused = (message: string, detail: string) =>
  new AppError('invalid_request', message, [{ path: 'file', message: detail }]);

/**
 * The text of a PDF (README, Answers from your documents), through pdf.js, page by page until
 * `maxChars` characters are read (what follows would be refused as too long anyway): a file that
 * is no PDF it can read, one with no text in it (a scan), more than {@link PDF_PAGES} pages, or
 * streams that unpack past their budget, is refused saying so.
 */
export async function textOfPdf(bytes: Uint8Array, maxChars: number): Promise<PdfText> {
  try {
    checkPdfStreams(bytes);
  } catch (err) {
    if (err instanceof PdfRefused) throw refused('The PDF is too large to read', err.message);
    throw err;
  }
  const { getDocumentProxy } = await import('unpdf');
  const pages: string[] = [];
  let title = '';
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    pdf = await getDocumentProxy(new Uint8Array(bytes), { isEvalSupported: false, stopAtErrors: true });
  } catch {
    throw refused('The file could not be read as a PDF', 'not a PDF, or a damaged or password-protected one');
  }
  try {
    if (pdf.numPages > PDF_PAGES)
      throw refused('The PDF is too large to read', `it has ${pdf.numPages} pages; at most ${PDF_PAGES}`);
    let chars = 0;
    for (let number = 1; number <= pdf.numPages && chars <= maxChars; number++) {
      const content = await (await pdf.getPage(number)).getTextContent();
      const text = content.items
        .map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : ''))
        .join('')
        .trim();
      chars += text.length;
      if (text) pages.push(text);
    }
    const info = (await pdf.getMetadata()).info as { Title?: unknown };
    if (typeof info.Title === 'string') title = info.Title.trim();
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw refused('The file could not be read as a PDF', 'not a PDF, or a damaged or password-protected one');
  } finally {
    await pdf.destroy();
  }
  const text = pages.join('\n\n');
  if (!text)
    throw refused(
      'The PDF holds no text to answer from',
      'its pages are images (a scan?): give its text instead, or a PDF made from the text',
    );
  return { title, text };
}
