import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WIDGET_LOCALES, type WidgetLocale } from './concierge/protocol/widget-locales.js';
import { PROJECT_ROOT } from './shared/project-root.js';

/** The widget's words, one JSON file per locale (README, The widget in your visitors' languages). */
export const CATALOGUE_DIR = join(PROJECT_ROOT, 'widget', 'locales');

export interface WidgetCatalogue {
  /** A hash of every locale's file: the widget build asks for `?v=` this, so a fetched catalogue may be cached for a year. */
  version: string;
  files: ReadonlyMap<WidgetLocale, Buffer>;
}

/** Every locale's catalogue as its file holds it, and their version. */
export function readCatalogue(dir = CATALOGUE_DIR): WidgetCatalogue {
  const hash = createHash('sha256');
  const files = new Map<WidgetLocale, Buffer>();
  for (const locale of WIDGET_LOCALES) {
    const file = readFileSync(join(dir, `${locale}.json`));
    hash.update(`${locale}\n`).update(file);
    files.set(locale, file);
  }
  return { version: hash.digest('hex').slice(0, 12), files };
}
