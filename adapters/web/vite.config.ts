import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

/** The console's build: adapters/web → dist/console, served by `steerlog serve` at `/`. */
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/',
  plugins: [preact()],
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../../dist/console', import.meta.url)),
    emptyOutDir: true,
    sourcemap: false,
    target: 'es2022',
  },
  // the dev server forwards /api to a local `steerlog serve` under its own Host (the host answers only loopback names);
  // the page's Origin stays the dev server's, so run `steerlog serve --cors http://localhost:5173`
  server: { proxy: { '/api': { target: 'http://127.0.0.1:7420', changeOrigin: true } } },
});
