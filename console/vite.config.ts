import { defineConfig } from 'vite';

/**
 * The console: static files served at /console/ under `default-src 'self'`, so nothing may be
 * inline (no inlined assets, no module-preload polyfill script).
 */
export default defineConfig({
  root: import.meta.dirname,
  base: './',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2020',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    // size-check.ts reads which files the first page loads, and which come later (the charts).
    manifest: true,
  },
});
