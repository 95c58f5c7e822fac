// The console's build (issue 21): web/ → dist/console, served by `netsvc serve` at `/` (api/console.ts).
// Preact's JSX through esbuild's automatic runtime, so no Babel plugin is needed.
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  publicDir: 'public',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  build: {
    outDir: '../dist/console',
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // Report what the budget counts (JavaScript, gzip): bench/console.ts measures it in the browser too.
    reportCompressedSize: true,
  },
  // `npx vite --config web/vite.config.mjs` with `netsvc serve` on 8080 for development.
  server: { proxy: { '/svc': 'http://127.0.0.1:8080' } },
});
