/** A streamed reply's text so far: its parts in order up to the first one still missing (README, Streaming a reply). */
export function streamedText(parts: readonly (string | undefined)[]): string {
  let text = '';
  for (const part of parts) {
    if (part === undefined) break;
    text += part;
  }
  return text;
}

/*
 * Where a reply's sentences end (README, Streaming a reply): at `.`, `!`, `?` or `…` (and the
 * quotes or brackets closing them) followed by whitespace, and at the CJK `。`, `！`, `？` (written
 * without a space after them). A streamed reply is read out sentence by sentence as each is
 * complete; the final reply completes the rest. Found by one walk over the text, never a pattern
 * that could backtrack: a model's or a customer's text is anyone's.
 */
const ENDS = '.!?…';
const CLOSING = '"\'”’)]';
const CJK_ENDS = '。！？';
const CJK_CLOSING = '」』”’）';
const isBlank = (char: string | undefined) => char !== undefined && /\s/.test(char);
/**
 * Marks in a row (`?!…"`) that still end a sentence, at most: a longer run is read as text, so
 * streamed text that keeps adding marks is never read again from the run's start.
 */
const MARKS_IN_A_ROW = 32;

/** Where each complete sentence of `text` ends, looking from `from` on. */
export function* sentenceStops(text: string, from = 0): Generator<number> {
  const skip = (at: number, chars: string) => {
    while (at < text.length && chars.includes(text[at]!)) at++;
    return at;
  };
  let at = from;
  while (at < text.length) {
    const char = text[at]!;
    const cjk = CJK_ENDS.includes(char);
    if (!cjk && !ENDS.includes(char)) {
      at++;
      continue;
    }
    const closed = cjk ? skip(skip(at, CJK_ENDS), CJK_CLOSING) : skip(skip(at, ENDS), CLOSING);
    if (closed - at > MARKS_IN_A_ROW) {
      at = closed;
      continue;
    }
    let stop = closed;
    while (isBlank(text[stop])) stop++;
    // A Latin end needs a blank after it; a CJK end at the very end of streamed text may yet be followed by its closing quote.
    if (stop === closed && (!cjk || stop === text.length)) {
      if (cjk) return;
      at = closed;
      continue;
    }
    yield stop;
    at = stop;
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
 * Where the complete sentences of streamed `text` end (0 when none is complete yet), looking from
 * `from` (a stop found before, or {@link openSentenceEnd}): a model's words are handed on as reply
 * parts up to there, so each part ends a sentence.
 */
export function completeSentencesEnd(text: string, from = 0): number {
  let end = 0;
  for (const stop of sentenceStops(text, from)) end = stop;
  return end;
}

/**
 * Where the marks still open at the end of streamed `text` begin (they may yet end a sentence): a
 * later look starts there. A run longer than {@link MARKS_IN_A_ROW} ends none, and is not looked at again.
 */
export function openSentenceEnd(text: string): number {
  let at = text.length;
  while (
    at > 0 &&
    text.length - at <= MARKS_IN_A_ROW &&
    (ENDS + CLOSING + CJK_ENDS + CJK_CLOSING).includes(text[at - 1]!)
  )
    at--;
  return text.length - at > MARKS_IN_A_ROW ? text.length : at;
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
