// The bundled CLI (`npm run build:cli`): made from tsc's output, so it is the compiled code, only in
// fewer files. Dynamic imports stay separate chunks (serve, dashboard, sessions load only when used).
// Packages stay external: node_modules is installed beside it, and their own file layout stays theirs.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { defineConfig } from 'rolldown';

/** The modules `from` reaches through static relative imports (what loading it loads). */
function staticClosure(from) {
  const seen = new Set();
  const visit = (file) => {
    if (seen.has(file)) return;
    seen.add(file);
    const source = readFileSync(file, 'utf8');
    for (const m of source.matchAll(/^(?:import|export)\s(?:[^'";]*?\sfrom\s)?['"](\.{1,2}\/[^'"]+)['"]/gm)) visit(resolve(dirname(file), m[1]));
  };
  visit(resolve(from));
  return seen;
}

// Everything an issue verb loads beyond what every command loads goes into one chunk: each extra file
// costs the reply its own resolve, read and link (issue 8: a reply within node start-up + 45 ms).
const everyCommand = staticClosure('dist/src/cli/run.js');
const issuePath = new Set([...staticClosure('dist/src/cli/issue-commands.js')].filter((id) => !everyCommand.has(id)));

export default defineConfig({
  input: { run: 'dist/src/cli/run.js' },
  platform: 'node',
  // What Rolldown would otherwise set by itself (and warn about as [INVALID_OPTION] on every build, npm
  // install included): run.js keeps its exports, and may export more for the chunks that share its modules;
  // `includeDependenciesRecursively: false` below requires it.
  preserveEntrySignatures: 'allow-extension',
  external: (id) => !id.startsWith('.') && !id.startsWith('/'),
  output: {
    dir: 'dist/cli',
    cleanDir: true,
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name]-[hash].js',
    sourcemap: true,
    codeSplitting: { includeDependenciesRecursively: false, groups: [{ name: 'issue-path', test: (id) => issuePath.has(id) }] },
  },
});
