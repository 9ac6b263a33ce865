import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { AppError } from './errors.js';
import { type RouteDef, defineRoute } from './http/route.js';
import { PROJECT_ROOT } from './shared/project-root.js';

export const WIDGET_BUNDLE = join(PROJECT_ROOT, 'widget', 'dist', 'concierge.js');

const HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Cross-Origin-Resource-Policy': 'cross-origin',
  'Cache-Control': 'public, max-age=300',
  'X-Content-Type-Options': 'nosniff',
};

/**
 * `GET /widget/concierge.js`: the script tag's bundle, for any site (CORS `*`, cross-origin
 * resource policy) and cacheable for five minutes, so a release reaches every page soon.
 */
export function widgetRoute(file = WIDGET_BUNDLE): RouteDef {
  // Read once: the bundle is built before the service starts and never changes under it.
  let bundle: Buffer | undefined;
  return defineRoute({
    method: 'get',
    path: '/widget/concierge.js',
    operationId: 'widgetBundle',
    summary: 'The widget bundle for the script tag',
    tag: 'Widget',
    auth: false,
    errors: ['not_found'],
    success: {
      status: 200,
      description: 'JavaScript, Preact included',
      data: z.string(),
      contentType: 'text/javascript; charset=utf-8',
      headers: { 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'public, max-age=300' },
    },
    handler: async () => {
      try {
        bundle ??= await readFile(file);
      } catch {
        throw new AppError('not_found', 'The widget is not built: run `npm run build:widget`');
      }
      return { data: bundle, headers: HEADERS };
    },
  });
}
