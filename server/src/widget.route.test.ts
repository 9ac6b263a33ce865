import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler } from './http/error-handler.js';
import { dispatchRoutes } from './http/dispatch.js';
import { StoreHealth } from './store/store-health.js';
import { widgetRoute } from './widget.route.js';

describe('GET /widget/concierge.js', () => {
  let dir: string;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'concierge-widget-'));
    writeFileSync(join(dir, 'concierge.js'), '(function(){window.Concierge={}})();');
    const logger = pino({ level: 'silent' });
    const onError = errorHandler(logger, new StoreHealth({ ping: async () => {}, logger }));
    const built = dispatchRoutes([widgetRoute(join(dir, 'concierge.js'))], { before: [], under: {}, onError });
    const missing = dispatchRoutes([widgetRoute(join(dir, 'absent.js'))], { before: [], under: {}, onError });
    // One server, two bundles: /built/... and /missing/... stand for a service with and without its build.
    const app = (req: IncomingMessage, res: ServerResponse) => {
      const [, mount] = /^\/(built|missing)\//.exec(req.url ?? '') ?? [];
      req.url = req.url!.slice(mount ? mount.length + 1 : 0);
      if (!(mount === 'built' ? built : missing)(req, res)) res.writeHead(404).end();
    };
    server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the bundle as is, to any origin, cacheable', async () => {
    const res = await fetch(`${base}/built/widget/concierge.js`, { headers: { origin: 'https://hotel.example' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('cross-origin-resource-policy')).toBe('cross-origin');
    expect(res.headers.get('cache-control')).toBe('public, max-age=300');
    expect(await res.text()).toBe('(function(){window.Concierge={}})();');
  });

  it('says how to build it when it is not built', async () => {
    const res = await fetch(`${base}/missing/widget/concierge.js`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ success: false, error: { code: 'not_found', message: 'The widget is not built: run `npm run build:widget`' } });
  });
});
