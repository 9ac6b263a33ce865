import { constants, inflateSync } from 'node:zlib';

/** What a PDF's compressed streams may decode to, in all, before pdf.js is given it. */
export const PDF_DECODED_BYTES = 64 * 1024 * 1024;

/** Why a PDF is refused before it is read. */
export class PdfRefused extends Error {
  override name = 'PdfRefused';
}

const STREAM = Buffer.from('stream');
const END_STREAM = Buffer.from('endstream');
const OBJ = Buffer.from(' obj');
/** How far back from `stream` its dictionary (and its filter) is looked for. */
const DICTIONARY_BYTES = 4_096;

/**
 * Measures what a PDF's Flate streams decode to, each inflated with a cap on its output, and
 * refuses a file whose streams together pass {@link PDF_DECODED_BYTES} (a 447 KiB file held one
 * stream of 150 MiB), or that uses LZW (an old filter whose output cannot be measured so cheaply).
 * One pass over the bytes; what cannot be read is left to pdf.js, which refuses it in turn.
 */
export function checkPdfStreams(bytes: Uint8Array, budget = PDF_DECODED_BYTES): void {
  const pdf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let left = budget;
  let at = 0;
  for (;;) {
    const keyword = pdf.indexOf(STREAM, at);
    if (keyword < 0) return;
    at = keyword + STREAM.length;
    // `endstream` also holds `stream`: only a keyword that starts data counts.
    if (keyword >= 3 && pdf.toString('latin1', keyword - 3, keyword) === 'end') continue;
    let start = at;
    if (pdf[start] === 0x0d) start++;
    if (pdf[start] !== 0x0a && pdf[start - 1] !== 0x0d) continue;
    if (pdf[start] === 0x0a) start++;
    const end = pdf.indexOf(END_STREAM, start);
    if (end < 0) return;
    at = end + END_STREAM.length;
    const from = Math.max(0, keyword - DICTIONARY_BYTES);
    const head = pdf.lastIndexOf(OBJ, keyword);
    const dictionary = pdf.toString('latin1', Math.max(from, head), keyword);
    if (/\/(LZWDecode|LZW)\b/.test(dictionary))
      throw new PdfRefused('it uses LZW compression, which is not read here: save it again as a current PDF');
    if (!/\/(FlateDecode|Fl)\b/.test(dictionary)) continue;
    let decoded: Buffer;
    try {
      decoded = inflateSync(pdf.subarray(start, end), {
        maxOutputLength: left + 1,
        finishFlush: constants.Z_SYNC_FLUSH,
      });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw overBudget(budget);
      continue;
    }
    left -= decoded.length;
    if (left < 0) throw overBudget(budget);
  }
}

const overBudget = (budget: number) =>
  new PdfRefused(`its compressed contents unpack to more than ${Math.round(budget / 1_048_576)} MB`);
