import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler } from './http/error-handler.js';
import { mountRoutes } from './http/route.js';
import { StoreHealth } from './store/store-health.js';
import { widgetRoute } from './widget.route.js';

describe('GET /widget/concierge.js', () => {
  let dir: string;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'concierge-widget-'));
    writeFileSync(join(dir, 'concierge.js'), '(function(){window.Concierge={}})();');
    const app = express();
    const built = express.Router();
    mountRoutes(built as unknown as express.Express, [widgetRoute(join(dir, 'concierge.js'))]);
    const missing = express.Router();
    mountRoutes(missing as unknown as express.Express, [widgetRoute(join(dir, 'absent.js'))]);
    app.use('/built', built);
    app.use('/missing', missing);
    const logger = pino({ level: 'silent' });
    app.use(errorHandler(logger, new StoreHealth(async () => {}, logger)));
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
