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

// Everything a family of verbs loads beyond what every command loads goes into one chunk: each extra
// file costs the verb its own resolve, read and link (issue 8: a reply within node start-up + 45 ms;
// issue 40: the command hook's `session signal`, and board, loaded 14 and 15 files). A module two
// families share goes to the first: the issue path (what openProject loads) is every path's base.
const everyCommand = staticClosure('dist/src/cli/run.js');
const taken = new Set(everyCommand);
const pathOf = (entry) => {
  const own = new Set([...staticClosure(entry)].filter((id) => !taken.has(id)));
  for (const id of own) taken.add(id);
  return own;
};
const issuePath = pathOf('dist/src/cli/issue-commands.js');
// The command hook (`session signal`, every agent event with no serve) loads this and the issue path only.
const signalPath = pathOf('dist/src/cli/session-signal-command.js');
const sessionPath = pathOf('dist/src/cli/session-commands.js');
const projectPath = pathOf('dist/src/cli/project-commands.js');

export default defineConfig({
  input: { run: 'dist/src/cli/run.js' },
  platform: 'node',
  // What Rolldown would otherwise set by itself (and warn about as [INVALID_OPTION] on every build, npm
  // install included): run.js keeps its exports, and may export more for the chunks that share its modules;
  // `includeDependenciesRecursively: false` below requires it.
  preserveEntrySignatures: 'allow-extension',
  external: (id) => !id.startsWith('.') && !id.startsWith('/'),
  // A module imported both statically and dynamically stays in the static graph, so its lazy import
  // saves nothing ([INEFFECTIVE_DYNAMIC_IMPORT]). `npm install` printed such warnings (issue 44); at
  // eb3a037 main.js imported usage-error.js lazily while every command file imported it statically (fixed
  // in 4170c9f: main imports it statically). The build fails on one now, naming the module, instead of a
  // warning at every install that the README would have to explain.
  onLog(level, log, handler) {
    if (log.code === 'INEFFECTIVE_DYNAMIC_IMPORT') handler('error', { ...log, message: `${log.message} (keep a lazily loaded module out of every static import: see cli.rolldown.config.mjs)` });
    else handler(level, log);
  },
  output: {
    dir: 'dist/cli',
    cleanDir: true,
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name]-[hash].js',
    sourcemap: true,
    codeSplitting: {
      includeDependenciesRecursively: false,
      groups: [
        { name: 'issue-path', test: (id) => issuePath.has(id) },
        { name: 'signal-path', test: (id) => signalPath.has(id) },
        { name: 'session-path', test: (id) => sessionPath.has(id) },
        { name: 'project-path', test: (id) => projectPath.has(id) },
      ],
    },
  },
});
