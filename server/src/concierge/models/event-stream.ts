/** A stream that does not read as the protocol says. */
export class MalformedStream extends Error {}

/** One event of the stream, at most: a chunk of a completion is a few hundred characters. */
const EVENT_CHARS = 1024 * 1024;

/**
 * Server-sent events as bytes arrive: events end at a blank line; an event's `data:` lines are
 * joined with newlines; comments (`:`) and other fields are skipped. A line may end in CRLF, CR or LF.
 */
export class EventStream {
  #pending = '';
  readonly #decoder = new TextDecoder();

  push(bytes: Buffer): string[] {
    this.#pending += this.#decoder.decode(bytes, { stream: true });
    if (this.#pending.length > EVENT_CHARS)
      throw new MalformedStream(`the stream sent an event of more than ${EVENT_CHARS} characters`);
    const blocks = this.#pending.split(/\r\n\r\n|\n\n|\r\r/);
    this.#pending = blocks.pop()!;
    return blocks.flatMap(dataOf);
  }

  end(): string[] {
    const rest = this.#pending + this.#decoder.decode();
    this.#pending = '';
    return dataOf(rest);
  }
}

function dataOf(block: string): string[] {
  const lines = block.split(/\r\n|\n|\r/).filter((line) => line.startsWith('data:'));
  if (!lines.length) return [];
  return [lines.map((line) => line.slice(line.startsWith('data: ') ? 6 : 5)).join('\n')];
}
