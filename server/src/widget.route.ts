import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { AppError } from './errors.js';
import { WIDGET_LOCALES, type WidgetLocale } from '#protocol/widget-locales';
import { type RouteDef, defineRoute } from './http/route.js';
import { builtFile } from './shared/built-file.js';
import { PROJECT_ROOT } from './shared/project-root.js';
import { readCatalogue, type WidgetCatalogue } from '../../widget/catalogue.js';

export const WIDGET_DIST = join(PROJECT_ROOT, 'widget', 'dist');
export const WIDGET_BUNDLE = join(WIDGET_DIST, 'concierge.js');
export const CATALOGUE_DIR = join(PROJECT_ROOT, 'widget', 'locales');

const HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Cross-Origin-Resource-Policy': 'cross-origin',
  'Cache-Control': 'public, max-age=300',
  'X-Content-Type-Options': 'nosniff',
};

/**
 * `GET /widget/concierge.js`: the script tag's file, for any site (CORS `*`, cross-origin
 * resource policy) and cacheable for five minutes, so a release reaches every page soon. It
 * imports the widget's modules under their hashed names ({@link widgetModuleRoute}).
 */
export function widgetRoute(file = WIDGET_BUNDLE): RouteDef {
  const bundle = builtFile(file, 'The widget is not built: run `npm run build:widget`');
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
      description: "JavaScript: queues the page's calls and imports the widget's module",
      data: z.string(),
      contentType: 'text/javascript; charset=utf-8',
      headers: { 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'public, max-age=300' },
    },
    handler: async () => ({ data: await bundle(), headers: HEADERS }),
  });
}

const YEAR_S = 365 * 24 * 3600;
const FOR_GOOD = `public, max-age=${YEAR_S}, immutable`;

/**
 * `GET /widget/assets/{file}`: the widget's ES modules (Preact, the session and the launcher; the
 * panel, fetched when the widget first opens). Their names carry a hash of their content, so they
 * are cached for good; CORS `*`, as a cross-origin module needs.
 */
export function widgetModuleRoute(dir = join(WIDGET_DIST, 'assets')): RouteDef {
  const modules = new Map<string, Buffer>();
  return defineRoute({
    method: 'get',
    path: '/widget/assets/:file',
    operationId: 'widgetModule',
    summary: "One of the widget's modules",
    tag: 'Widget',
    auth: false,
    params: z.object({ file: z.string().regex(/^[\w-]{1,100}\.js$/) }),
    errors: ['not_found'],
    success: {
      status: 200,
      description: 'A JavaScript module',
      data: z.string(),
      contentType: 'text/javascript; charset=utf-8',
      headers: { 'Access-Control-Allow-Origin': '*', 'Cache-Control': 'A year, immutable' },
    },
    handler: async ({ params }) => {
      let module = modules.get(params.file);
      if (!module) {
        try {
          module = await readFile(join(dir, params.file));
        } catch {
          throw new AppError(
            'not_found',
            'No such module: the widget is of another build, or not built (`npm run build:widget`)',
          );
        }
        modules.set(params.file, module);
      }
      return { data: module, headers: { ...HEADERS, 'Cache-Control': FOR_GOOD } };
    },
  });
}

/**
 * `GET /widget/locales/{locale}.json`: the widget's words in one locale, fetched by the widget on
 * demand (README, The widget in your visitors' languages). Asked for with the catalogue's current
 * `v`, as the widget built with it does, it may be cached for a year; any other `v` (an older
 * widget, a hand-typed URL) gets today's words, cached for five minutes.
 */
export function widgetLocaleRoute(dir = CATALOGUE_DIR): RouteDef {
  let catalogue: WidgetCatalogue | undefined;
  return defineRoute({
    method: 'get',
    path: '/widget/locales/:locale.json',
    operationId: 'widgetLocale',
    summary: "The widget's words in one locale",
    tag: 'Widget',
    auth: false,
    params: z.object({ locale: z.string().max(16) }),
    query: z.object({
      v: z
        .string()
        .max(64)
        .optional()
        .meta({ description: "The catalogue's version, as the widget bundle asks for it" }),
    }),
    errors: ['not_found'],
    success: {
      status: 200,
      description: 'Each string by its key; a plural string as an object by `Intl.PluralRules` category',
      data: z.record(z.string(), z.union([z.string(), z.record(z.string(), z.string())])),
      contentType: 'application/json; charset=utf-8',
      headers: {
        'Access-Control-Allow-Origin': '*',
        'Cache-Control': 'A year (immutable) with the current `v`, else five minutes',
      },
    },
    handler: ({ params, query }) => {
      if (!(WIDGET_LOCALES as readonly string[]).includes(params.locale))
        throw new AppError('not_found', `No such locale; the widget has ${WIDGET_LOCALES.join(', ')}`);
      catalogue ??= readCatalogue(dir);
      const current = query.v === catalogue.version;
      return {
        data: catalogue.files.get(params.locale as WidgetLocale)!,
        headers: { ...HEADERS, 'Cache-Control': current ? FOR_GOOD : HEADERS['Cache-Control'] },
      };
    },
  });
}
