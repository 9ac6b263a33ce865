/**
 * A reply as the visitor reads it (README, Actions on a reply): text, never HTML. Line breaks stay,
 * lines starting with `- ` become a list, and `http(s)://` URLs become links that open in a new tab.
 */
export function ReplyText({ text }: { text: string }) {
  // Runs of list lines and of other lines, in order.
  const blocks: string[][] = [];
  for (const line of text.split('\n')) {
    const last = blocks[blocks.length - 1];
    if (last && isItem(last[0]!) === isItem(line)) last.push(line);
    else blocks.push([line]);
  }
  return (
    <>
      {blocks.map((lines) =>
        isItem(lines[0]!) ? (
          <ul>
            {lines.map((line) => (
              <li>{linked(line.slice(2))}</li>
            ))}
          </ul>
        ) : (
          <span class="para">{linked(lines.join('\n'))}</span>
        ),
      )}
    </>
  );
}

const isItem = (line: string) => line.startsWith('- ');

/** A URL the widget may open: `http:` or `https:` only, whatever the service let through. */
export const isWebUrl = (url: string): boolean => /^https?:\/\//i.test(url);

/** URLs in text; the punctuation after one (a closing bracket too) belongs to the sentence, not the URL. */
const URL_IN_TEXT = /\b(https?:\/\/[^\s<>"]*[^\s<>".,;:!?'’”)*_])/;

/** The text with its URLs as links: splitting on a captured pattern puts the URLs at the odd places. */
const linked = (text: string) =>
  text.split(URL_IN_TEXT).map((piece, i) =>
    i % 2 ? (
      <a href={piece} target="_blank" rel="noopener noreferrer">
        {piece}
      </a>
    ) : (
      piece
    ),
  );
