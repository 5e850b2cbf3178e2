// The bundled CLI (`npm run build:cli`): made from tsc's output, so it is the compiled code, only in
// fewer files. Dynamic imports stay separate chunks (serve, dashboard, sessions load only when used).
// Packages stay external: node_modules is installed beside it, and their own file layout stays theirs.
import { defineConfig } from 'rolldown';

export default defineConfig({
  input: { run: 'dist/src/cli/run.js' },
  platform: 'node',
  external: (id) => !id.startsWith('.') && !id.startsWith('/'),
  output: { dir: 'dist/cli', cleanDir: true, format: 'esm', entryFileNames: '[name].js', chunkFileNames: 'chunks/[name]-[hash].js', sourcemap: true },
});
