import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Where Debian keeps the packages' documentation on this machine. */
export const DOC_ROOT = '/usr/share/doc';

/**
 * The bench corpus: real public text that ships on this machine, Debian's HTML documentation of
 * Node.js (its API reference, less all.html, which repeats every page), Valgrind, eSpeak NG, libffi
 * and libxslt. Each HTML file is one document; `path` is relative to {@link DOC_ROOT}.
 */
const SOURCES = ['nodejs/api', 'valgrind/html', 'espeak-ng/docs', 'libffi8/html', 'libxslt1-dev'];

export interface CorpusDocument {
  path: string;
  html: string;
}

export function corpus(): { documents: CorpusDocument[]; missing: string[] } {
  const documents: CorpusDocument[] = [];
  const missing = SOURCES.filter((source) => !existsSync(join(DOC_ROOT, source)));
  for (const source of SOURCES.filter((s) => !missing.includes(s)))
    for (const file of readdirSync(join(DOC_ROOT, source), { recursive: true, encoding: 'utf8' }).sort()) {
      if (!file.endsWith('.html') || file.endsWith('all.html')) continue;
      const path = relative(DOC_ROOT, join(DOC_ROOT, source, file));
      documents.push({ path, html: readFileSync(join(DOC_ROOT, path), 'utf8') });
    }
  return { documents, missing };
}

export interface Question {
  q: string;
  /** The documents that answer it (any one will do). */
  docs: string[];
}

export function questions(): Question[] {
  return (JSON.parse(readFileSync(new URL('./questions.json', import.meta.url), 'utf8')) as { questions: Question[] })
    .questions;
}
