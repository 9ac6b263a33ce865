import { Parser } from 'htmlparser2';
import { ANCHOR_CHARS, capped, HEADING_CHARS } from '../chunker.js';

/** What a page says, as Markdown: its headings (with their ids as anchors) and paragraphs. */
export interface PageText {
  /** `<title>`, else the first `<h1>`; empty when it has neither. */
  title: string;
  markdown: string;
  /** A password field and next to nothing else: a sign-in page, not the page that was meant. */
  signInOnly: boolean;
}

/** Elements whose text is no part of what the page says: code, the site's navigation and chrome, controls. */
const SKIPPED = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'svg',
  'nav',
  'header',
  'footer',
  'aside',
  'iframe',
  'button',
  'select',
  'textarea',
]);
/** Elements that end a paragraph. */
const BLOCKS = new Set([
  'p',
  'div',
  'section',
  'article',
  'main',
  'li',
  'ul',
  'ol',
  'dl',
  'dt',
  'dd',
  'br',
  'tr',
  'table',
  'blockquote',
  'pre',
  'figure',
  'figcaption',
  'form',
  'hr',
]);
/** Less text than this beside a password field: the page is a sign-in form. */
const SIGN_IN_TEXT = 400;

/**
 * An HTML page read as its reader sees it (README, Answers from your documents): headings become
 * Markdown headings carrying their `id` (`## Parking {#parking}`) so a passage's citation links to
 * its section; scripts, styles, navigation, header, footer and form controls are left out.
 */
export function textOfHtml(html: string): PageText {
  const lines: string[] = [];
  let paragraph = '';
  let skipping = 0;
  let heading: { level: number; id: string | undefined; text: string } | undefined;
  let inTitle = false;
  let title = '';
  let firstH1 = '';
  let password = false;
  const close = () => {
    const text = paragraph.replace(/\s+/g, ' ').trim();
    if (text) lines.push(text, '');
    paragraph = '';
  };
  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name === 'input' && attrs.type?.toLowerCase() === 'password') password = true;
        if (SKIPPED.has(name)) skipping++;
        if (skipping) return;
        if (name === 'title') inTitle = true;
        else if (/^h[1-6]$/.test(name)) {
          close();
          heading = { level: Number(name[1]), id: attrs.id, text: '' };
        } else if (BLOCKS.has(name)) close();
      },
      ontext(text) {
        if (inTitle) title += text;
        else if (skipping) return;
        else if (heading) heading.text += text;
        else paragraph += text;
      },
      onclosetag(name) {
        if (SKIPPED.has(name)) {
          skipping = Math.max(0, skipping - 1);
          return;
        }
        if (skipping) return;
        if (name === 'title') inTitle = false;
        else if (heading && name === `h${heading.level}`) {
          // Headings are stored with every passage under them: kept short, as the chunker keeps Markdown's.
          const text = capped(heading.text.replace(/\s+/g, ' ').trim(), HEADING_CHARS);
          if (text) {
            if (heading.level === 1 && !firstH1) firstH1 = text;
            const anchor =
              heading.id && heading.id.length <= ANCHOR_CHARS && /^[^\s{}]+$/.test(heading.id)
                ? ` {#${heading.id}}`
                : '';
            lines.push(`${'#'.repeat(heading.level)} ${text}${anchor}`, '');
          }
          heading = undefined;
        } else if (BLOCKS.has(name)) close();
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  close();
  const markdown = lines.join('\n').trim();
  const words = markdown
    .replace(/^#+ .*$/gm, '')
    .replace(/\s+/g, ' ')
    .trim();
  return {
    title: title.replace(/\s+/g, ' ').trim() || firstH1,
    markdown,
    signInOnly: password && words.length < SIGN_IN_TEXT,
  };
}
