import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WIDGET_LOCALES, type WidgetLocale } from '#protocol/widget-locales';

/**
 * The widget's words, one JSON file per locale in `widget/locales/` (README, The widget in your
 * visitors' languages): read by the widget's build for their version and by the service that
 * serves them. Both say where the folder is: the compiled service runs from elsewhere.
 */

export interface WidgetCatalogue {
  /** A hash of every locale's file: the widget build asks for `?v=` this, so a fetched catalogue may be cached for a year. */
  version: string;
  files: ReadonlyMap<WidgetLocale, Buffer>;
}

/** Every locale's catalogue as its file holds it, and their version. */
export function readCatalogue(dir: string): WidgetCatalogue {
  const hash = createHash('sha256');
  const files = new Map<WidgetLocale, Buffer>();
  for (const locale of WIDGET_LOCALES) {
    const file = readFileSync(join(dir, `${locale}.json`));
    hash.update(`${locale}\n`).update(file);
    files.set(locale, file);
  }
  return { version: hash.digest('hex').slice(0, 12), files };
}
