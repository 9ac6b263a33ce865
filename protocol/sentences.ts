/** A streamed reply's text so far: its parts in order up to the first one still missing (README, Streaming a reply). */
export function streamedText(parts: readonly (string | undefined)[]): string {
  let text = '';
  for (const part of parts) {
    if (part === undefined) break;
    text += part;
  }
  return text;
}

/**
 * Where a reply's sentences end (README, Streaming a reply): at `.`, `!`, `?` or `…` followed by
 * whitespace, and at the CJK `。`, `！`, `？` (written without a space after them). A streamed
 * reply is read out sentence by sentence as each is complete; the final reply completes the rest.
 */
const SENTENCE_END = /[.!?…]+["'”’)\]]*\s+|[。！？]+[」』”’）]*\s*/g;

/** Where each complete sentence of `text` ends. */
function* sentenceStops(text: string): Generator<number> {
  for (const end of text.matchAll(SENTENCE_END)) {
    const stop = end.index! + end[0].length;
    // A CJK end at the very end of streamed text may yet be followed by its closing quote.
    if (stop === text.length && !/\s$/.test(end[0]) && /[。！？]/.test(end[0])) return;
    yield stop;
  }
}

/** The complete sentences of `text`, trimmed; with `final`, whatever follows the last end is one too. */
export function sentencesOf(text: string, final: boolean): string[] {
  const sentences: string[] = [];
  let start = 0;
  for (const stop of sentenceStops(text)) {
    push(sentences, text.slice(start, stop));
    start = stop;
  }
  if (final) push(sentences, text.slice(start));
  return sentences;
}

/**
 * Where the complete sentences of streamed `text` end (0 when none is complete yet): a model's
 * words are handed on as reply parts up to there, so each part ends a sentence.
 */
export function completeSentencesEnd(text: string): number {
  let end = 0;
  for (const stop of sentenceStops(text)) end = stop;
  return end;
}

function push(sentences: string[], sentence: string): void {
  const trimmed = sentence.trim();
  if (trimmed) sentences.push(trimmed);
}

/**
 * What is left to say of a reply one turn at a time: each call gives the sentences not handed out
 * before, counted by position, so a sentence already said is never said again, even when the final
 * reply words it differently.
 */
export function unspoken(text: string, final: boolean, spoken: number): { sentences: string[]; spoken: number } {
  const all = sentencesOf(text, final);
  return { sentences: all.slice(spoken), spoken: Math.max(spoken, all.length) };
}

/**
 * How long a character takes to say, for a voice with no clock of its own (the browser's): the
 * widget turns the last word it heard begin into `offset_ms` with it, and the service turns that
 * back into how much of the sentence was heard.
 */
export const SPOKEN_MS_PER_CHAR = 65;
