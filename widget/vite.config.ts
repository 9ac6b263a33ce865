import { defineConfig } from 'vite';

/** One self-contained IIFE (Preact included) for the script tag; the service serves it as is. */
export default defineConfig({
  root: import.meta.dirname,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    lib: { entry: 'src/loader.tsx', formats: ['iife'], name: 'ConciergeWidget', fileName: () => 'concierge.js' },
  },
});
