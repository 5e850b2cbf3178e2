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
// families share goes to the first.
//
// The command hook has its own entry and build (hook.cjs, below, chosen by bin.ts), which must not load
// run.js: run.js imports the parser (cac) and holds the verb table. The groups still follow the hook's graph
// for the verbs that share it: what run.js and the hook both load goes to `common`; what the hook shares with
// the issue verbs (the append log, the session log, settings: what opening a project loads) to `open-path`;
// what only the hook's code needs (the signal verb, the adapters, the usage read: the session verbs load it)
// to `hook-path`, which no issue verb loads.
const runAll = staticClosure('dist/src/cli/run.js');
const hookEntry = resolve('dist/src/cli/hook.js');
const hookAll = staticClosure(hookEntry);
const issueAll = staticClosure('dist/src/cli/issue-commands.js');
const common = new Set([...runAll].filter((id) => hookAll.has(id)));
const openPath = new Set([...hookAll].filter((id) => !runAll.has(id) && issueAll.has(id)));
// The readers (board, graph, session ls) load what they need beyond the issue verbs in two chunks: what
// the hook loads too (the session log's projections: `shared-path`) and their own (`read-path`: the
// board's build, the listing); never the hook's signal verb, adapters and tmux client, nor the session
// verbs (issue 40: board loaded all of them).
const readAll = new Set([...staticClosure('dist/src/cli/board-entry.js'), ...staticClosure('dist/src/cli/session-ls-command.js')]);
readAll.delete(resolve('dist/src/cli/board-entry.js'));
const sharedPath = new Set([...readAll].filter((id) => hookAll.has(id) && !runAll.has(id) && !issueAll.has(id)));
const readPath = new Set([...readAll].filter((id) => !hookAll.has(id) && !runAll.has(id) && !issueAll.has(id)));
const hookPath = new Set([...hookAll].filter((id) => !runAll.has(id) && !issueAll.has(id) && !sharedPath.has(id) && id !== hookEntry));
const taken = new Set([...runAll, ...hookAll, ...readPath]);
const pathOf = (entry) => {
  const own = new Set([...staticClosure(entry)].filter((id) => !taken.has(id)));
  for (const id of own) taken.add(id);
  return own;
};
// The issue path (what openProject loads beyond the hook's) is every other verb's base.
const issuePath = pathOf('dist/src/cli/issue-commands.js');
const sessionPath = pathOf('dist/src/cli/session-commands.js');
const projectPath = pathOf('dist/src/cli/project-commands.js');

const shared = {
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
};

export default defineConfig([{
  ...shared,
  // board-entry: `board` and `graph` exactly (bin.ts), without run.js's parser and verb table.
  input: { run: 'dist/src/cli/run.js', 'board-entry': 'dist/src/cli/board-entry.js' },
  output: {
    dir: 'dist/cli',
    cleanDir: true,
    format: 'esm',
    entryFileNames: '[name].js',
    chunkFileNames: 'chunks/[name]-[hash].js',
    sourcemap: true,
    // No comments in the bundle (the source maps lead back to the commented source): a third of its bytes,
    // which every start parsed (issue 40: ~3 ms of CPU for board and for issue reply, side by side).
    comments: false,
    codeSplitting: {
      includeDependenciesRecursively: false,
      groups: [
        { name: 'common', test: (id) => common.has(id) },
        { name: 'open-path', test: (id) => openPath.has(id) },
        { name: 'shared-path', test: (id) => sharedPath.has(id) },
        { name: 'read-path', test: (id) => readPath.has(id) },
        { name: 'hook-path', test: (id) => hookPath.has(id) },
        { name: 'issue-path', test: (id) => issuePath.has(id) },
        { name: 'session-path', test: (id) => sessionPath.has(id) },
        { name: 'project-path', test: (id) => projectPath.has(id) },
      ],
    },
  },
}, {
  ...shared,
  // The command hook (every agent event with no serve, issue 40's CPU per event) is a build of its own, run
  // after the one above (which cleans dist/cli): one file, dist/cli/hook.cjs, holding only what the hook runs,
  // tree-shaken for it alone, instead of the six files cut for every verb (common, open-path, shared-path,
  // hook-path …) with their other code (the group named as the entry puts its whole static graph in it). Its
  // lazy parts (a held prompt's delivery, the confined relay, opencode's usage) are chunks of its own,
  // hook-chunks/. CommonJS, which bin.ts requires: node's builtins are then required, not imported through an
  // ES module facade each (making one reads every export, and loaded webcrypto for crypto's), and bin.js can
  // compile it with V8's code cache (src/cli/code-cache.ts). Measured side by side in turns (CPU per event, 48
  // each, node -e 0 at 61.9 ms): the six chunks 96.7 ms, one ES module file 90.8, one CommonJS file 91.9, with
  // the code cache 87.3 (and without node:net, src/cli/output.ts: 82.7).
  input: { hook: 'dist/src/cli/hook.js' },
  output: {
    dir: 'dist/cli',
    format: 'cjs',
    // An import() in a script V8 compiled from its code cache throws "A dynamic import callback was not
    // specified" (Node 20, whatever importModuleDynamically says): the packages the hook loads lazily
    // (isomorphic-git, @pydantic/genai-prices) are required instead, both of them CommonJS-loadable.
    dynamicImportInCjs: false,
    entryFileNames: '[name].cjs',
    chunkFileNames: 'hook-chunks/[name]-[hash].cjs',
    sourcemap: true,
    codeSplitting: { groups: [{ name: 'hook', test: (id) => hookAll.has(id) }] },
  },
}]);
