import preact from '@preact/preset-vite';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));

// Relative asset URLs (`base: './'`): the same bundle works at `/` of `trellis serve` and under a
// gateway's `/p/<id>/`. No module-preload polyfill: it would be the only inline script.
export default defineConfig({
  root: here,
  base: './',
  plugins: [preact({ devToolsEnabled: false, prefreshEnabled: false })],
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../../dist/dashboard', import.meta.url)),
    emptyOutDir: true,
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: true,
    target: 'es2022',
  },
});
