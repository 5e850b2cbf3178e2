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
    // Rolldown's [PLUGIN_TIMINGS] note (the bundlerTimings check) says how long plugins took when that share of the build is large,
    // which on a loaded machine (npm install, CI on two cores) it often is: a timing report, not a problem
    // of the build, and `npm install` prints no warning the README does not explain. Only that check is off.
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
});
