import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler } from './http/error-handler.js';
import { dispatchRoutes } from './http/dispatch.js';
import { StoreHealth, storeOutage } from './store/store-health.js';
import { readCatalogue } from '../../widget/catalogue.js';
import { CATALOGUE_DIR, widgetLocaleRoute, widgetModuleRoute, widgetRoute } from './widget.route.js';
import type { RouteDef } from './http/route.js';

const logger = pino({ level: 'silent' });
const onError = errorHandler(logger, [storeOutage(new StoreHealth({ ping: async () => {}, logger }))]);
/** Routes served as the service serves them, its error envelope included. */
const dispatcher = (routes: RouteDef[]) => dispatchRoutes(routes, { before: [], under: {}, onError });

/** What a widget file is served as: status, type, who may use it, and how long it may be cached. */
const servedAs = (res: Response) => ({
  status: res.status,
  type: res.headers.get('content-type'),
  cors: res.headers.get('access-control-allow-origin'),
  resourcePolicy: res.headers.get('cross-origin-resource-policy'),
  cache: res.headers.get('cache-control'),
});
const javascript = { status: 200, type: 'text/javascript; charset=utf-8', cors: '*', resourcePolicy: 'cross-origin' };

/** A real server on a random port, and its base URL. */
async function listening(
  app: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; base: string }> {
  const server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

describe('GET /widget/concierge.js', () => {
  let dir: string;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'concierge-widget-'));
    writeFileSync(join(dir, 'concierge.js'), '(function(){window.Concierge={}})();');
    const built = dispatcher([widgetRoute(join(dir, 'concierge.js'))]);
    const missing = dispatcher([widgetRoute(join(dir, 'absent.js'))]);
    // One server, two bundles: /built/... and /missing/... stand for a service with and without its build.
    const app = (req: IncomingMessage, res: ServerResponse) => {
      const [, mount] = /^\/(built|missing)\//.exec(req.url ?? '') ?? [];
      req.url = req.url!.slice(mount ? mount.length + 1 : 0);
      if (!(mount === 'built' ? built : missing)(req, res)) res.writeHead(404).end();
    };
    ({ server, base } = await listening(app));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the bundle as is, to any origin, cacheable', async () => {
    const res = await fetch(`${base}/built/widget/concierge.js`, { headers: { origin: 'https://hotel.example' } });
    expect(servedAs(res)).toEqual({ ...javascript, cache: 'public, max-age=300' });
    expect(await res.text()).toBe('(function(){window.Concierge={}})();');
  });

  it('says how to build it when it is not built', async () => {
    const res = await fetch(`${base}/missing/widget/concierge.js`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({
      success: false,
      error: { code: 'not_found', message: 'The widget is not built: run `npm run build:widget`' },
    });
  });
});

describe("the widget's modules and words", () => {
  let dir: string;
  let server: Server;
  let base: string;
  const catalogue = readCatalogue(CATALOGUE_DIR);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'concierge-widget-assets-'));
    writeFileSync(join(dir, 'panel-Ab12_cd.js'), 'export const Panel = 1;');
    const dispatch = dispatcher([widgetModuleRoute(dir), widgetLocaleRoute()]);
    ({ server, base } = await listening((req, res) => void (dispatch(req, res) || res.writeHead(404).end())));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves a module to any origin, cached for good: its name carries its hash', async () => {
    const res = await fetch(`${base}/widget/assets/panel-Ab12_cd.js`, { headers: { origin: 'https://hotel.example' } });
    expect(servedAs(res)).toEqual({ ...javascript, cache: 'public, max-age=31536000, immutable' });
    expect(await res.text()).toBe('export const Panel = 1;');
  });

  it('refuses a name that is not a module, and says when a module is not there', async () => {
    const missing = await fetch(`${base}/widget/assets/panel-old.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: unknown }).error).toMatchObject({
      code: 'not_found',
      message: 'No such module: the widget is of another build, or not built (`npm run build:widget`)',
    });
    // Like a malformed id, a name that is no module's is not found (README, The management API); an encoded slash names no route at all.
    const bad = await fetch(`${base}/widget/assets/panel.js.map`);
    expect([bad.status, ((await bad.json()) as { error: { code: string } }).error.code]).toEqual([404, 'not_found']);
    expect((await fetch(`${base}/widget/assets/..%2F..%2Fpackage.json`)).status).toBe(404);
  });

  it("serves a locale's words as its file holds them: for a year under the current version, five minutes under any other", async () => {
    const current = await fetch(`${base}/widget/locales/de.json?v=${catalogue.version}`, {
      headers: { origin: 'https://hotel.example' },
    });
    expect(servedAs(current)).toEqual({
      ...javascript,
      type: 'application/json; charset=utf-8',
      cache: 'public, max-age=31536000, immutable',
    });
    expect(Buffer.from(await current.arrayBuffer()).equals(catalogue.files.get('de')!)).toBe(true);
    for (const url of ['/widget/locales/zh-Hans.json', '/widget/locales/he.json?v=0123456789ab']) {
      const res = await fetch(`${base}${url}`);
      expect([res.status, res.headers.get('cache-control')]).toEqual([200, 'public, max-age=300']);
      expect(await res.json()).toHaveProperty('send');
    }
  });

  it('says which locales there are when asked for another', async () => {
    const res = await fetch(`${base}/widget/locales/xx.json`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: unknown }).error).toMatchObject({
      code: 'not_found',
      message: 'No such locale; the widget has en, es, fr, de, it, pt, nl, pl, tr, ru, ja, ko, zh-Hans, ar, he',
    });
  });
});
