import { existsSync } from 'node:fs';
import { join } from 'node:path';
import express, { type RequestHandler, Router } from 'express';
import { AppError } from '../errors.js';
import { PROJECT_ROOT } from '../shared/project-root.js';

export const CONSOLE_DIR = join(PROJECT_ROOT, 'console', 'dist');

/** Nothing inline, nothing from elsewhere (but the voice sample the page itself fetched, played from a blob: URL), and never inside another site's frame. */
const CONSOLE_CSP =
  "default-src 'self'; media-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

const securityHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  next();
};

/**
 * `/console`: the built single-page app, as static files (routes live after `#`, so one
 * index.html serves them all). Every response is `no-store` (set before this router).
 */
export function consoleStatic(dir = CONSOLE_DIR): Router {
  const router = Router();
  router.use(securityHeaders);
  router.get('/', (req, res, next) => {
    // `/console` → `/console/` (its query kept), so the page's relative asset paths resolve under it.
    const [path, query] = req.originalUrl.split(/\?(.*)/s);
    if (path === '/console') return res.redirect(308, `/console/${query ? `?${query}` : ''}`);
    if (!existsSync(join(dir, 'index.html')))
      return next(new AppError('not_found', 'The console is not built: run `npm run build:console`'));
    next();
  });
  router.use(
    express.static(dir, {
      index: 'index.html',
      redirect: false,
      etag: false,
      lastModified: false,
      cacheControl: false,
      dotfiles: 'ignore',
      fallthrough: true,
    }),
  );
  return router;
}

/**
 * `/favicon.ico`: browsers ask the origin's root for it on any page without an icon of its own
 * (the OpenAPI document, an error page); the console's icon answers instead of a 404.
 */
export function serviceFavicon(dir = CONSOLE_DIR): RequestHandler {
  return (req, res, next) => {
    if (req.path !== '/' || (req.method !== 'GET' && req.method !== 'HEAD')) return next();
    res.sendFile(
      join(dir, 'favicon.svg'),
      { headers: { 'Content-Type': 'image/svg+xml', 'Cache-Control': 'public, max-age=86400' } },
      (err) => err && next(new AppError('not_found', 'No such route')),
    );
  };
}
