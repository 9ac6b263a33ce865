import { extractText, getDocumentProxy } from 'unpdf';
import { AppError } from '../../errors.js';

/** A PDF's text, a page a paragraph, and its own title where it names one. */
export interface PdfText {
  title: string;
  text: string;
}

/**
 * The text of a PDF (README, Answers from your documents), through pdf.js: a file that is no PDF
 * it can read, or one with no text in it (a scan), is refused saying so.
 */
export async function textOfPdf(bytes: Buffer): Promise<PdfText> {
  let pages: string[];
  let title = '';
  try {
    const pdf = await getDocumentProxy(new Uint8Array(bytes), { isEvalSupported: false, stopAtErrors: true });
    try {
      pages = (await extractText(pdf, { mergePages: false })).text;
      const info = (await pdf.getMetadata()).info as { Title?: unknown };
      if (typeof info.Title === 'string') title = info.Title.trim();
    } finally {
      await pdf.destroy();
    }
  } catch {
    throw new AppError('invalid_request', 'The file could not be read as a PDF', [
      { path: 'file', message: 'not a PDF, or a damaged or password-protected one' },
    ]);
  }
  const text = pages
    .map((page) => page.trim())
    .filter(Boolean)
    .join('\n\n');
  if (!text)
    throw new AppError('invalid_request', 'The PDF holds no text to answer from', [
      {
        path: 'file',
        message: 'its pages are images (a scan?): give its text instead, or a PDF made from the text',
      },
    ]);
  return { title, text };
}
