import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { defineConfig, type Plugin } from 'vite';
import { readCatalogue } from './catalogue.ts';

/**
 * `concierge.js`, the file the script tag loads: widget/script-tag.js with the entry module's
 * hashed name written in (README, Putting the widget on a site).
 */
function scriptTag(): Plugin {
  return {
    name: 'concierge-script-tag',
    generateBundle(_, bundle) {
      const entry = Object.values(bundle).find((file) => file.type === 'chunk' && file.isEntry)!;
      // Without its comments: every host page loads it.
      const code = readFileSync(join(import.meta.dirname, 'script-tag.js'), 'utf8').replace(/^\s*\/\/.*\n/gm, '');
      this.emitFile({
        type: 'asset',
        fileName: 'concierge.js',
        source: code.replace('WIDGET_MODULE', JSON.stringify(entry.fileName)),
      });
    },
  };
}

/**
 * `en.json?catalogue`: the English catalogue as one object, a module of its own. The panel imports
 * it whole while the every-page bundle imports only the launcher's words from `en.json` (see
 * `src/ui/words.ts`); as one module, the whole catalogue would land on every page.
 */
function wholeCatalogue(): Plugin {
  const prefix = '\0whole-catalogue:';
  return {
    name: 'concierge-whole-catalogue',
    enforce: 'pre',
    resolveId(id, importer) {
      if (!id.endsWith('.json?catalogue') || !importer) return null;
      // Not ending in `.json`: the built-in JSON plugin would take it back.
      return prefix + join(dirname(importer), id.slice(0, -'.json?catalogue'.length));
    },
    load(id) {
      if (!id.startsWith(prefix)) return null;
      return `export default ${readFileSync(`${id.slice(prefix.length)}.json`, 'utf8')};`;
    },
  };
}

/**
 * The widget as ES modules under `assets/` (hashed names, cacheable for good): the entry holds
 * Preact, the session and the launcher; the panel is its own module, fetched when the widget
 * first opens.
 */
export default defineConfig({
  root: import.meta.dirname,
  // Files the modules name (the capture's worklet) are found beside them, wherever the service serves them.
  experimental: { renderBuiltUrl: () => ({ relative: true }) },
  // The widget asks for other locales' words under this version: cacheable for as long as it holds.
  define: { __CATALOGUE_VERSION__: JSON.stringify(readCatalogue(join(import.meta.dirname, 'locales')).version) },
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  plugins: [scriptTag(), wholeCatalogue()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Terser's two passes make the every-page bundle smaller than the default minifier does.
    minify: 'terser',
    terserOptions: { module: true, compress: { passes: 2 } },
    manifest: true,
    modulePreload: false,
    // The capture's AudioWorklet is a file of its own, fetched from the service like the modules: a
    // data: URL in its place would need every host page's CSP to allow one.
    assetsInlineLimit: 0,
    rollupOptions: {
      input: { widget: join(import.meta.dirname, 'src/loader.tsx') },
      preserveEntrySignatures: false,
      output: { format: 'es', entryFileNames: 'assets/[name]-[hash].js', chunkFileNames: 'assets/[name]-[hash].js' },
    },
  },
});
