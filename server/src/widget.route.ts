import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Request, Response } from 'express';
import { AppError } from './errors.js';

export const WIDGET_BUNDLE = join(import.meta.dirname, '..', '..', 'widget', 'dist', 'concierge.js');

/**
 * `GET /widget/concierge.js`: the script tag's bundle, for any site (CORS `*`, cross-origin
 * resource policy) and cacheable for five minutes, so a release reaches every page soon.
 */
export function widgetBundle(file = WIDGET_BUNDLE) {
  return async (_req: Request, res: Response): Promise<void> => {
    let bundle: Buffer;
    try {
      bundle = await readFile(file);
    } catch {
      throw new AppError('not_found', 'The widget is not built: run `npm run build:widget`');
    }
    res
      .status(200)
      .set({
        'Content-Type': 'text/javascript; charset=utf-8',
        'Access-Control-Allow-Origin': '*',
        'Cross-Origin-Resource-Policy': 'cross-origin',
        'Cache-Control': 'public, max-age=300',
        'X-Content-Type-Options': 'nosniff',
      })
      .end(bundle);
  };
}
