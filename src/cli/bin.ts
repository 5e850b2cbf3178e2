#!/usr/bin/env node
import { chooseEntry, hookCall, readerCall } from './entry-choice.js';

// One bundled file (plus lazy chunks for the big verbs) loads in a fraction of the time of the many small
// modules it is made from; see entry-choice.ts for when the unbundled entry runs instead.
const bundled = (name: string) => chooseEntry(new URL(`../../cli/${name}`, import.meta.url), new URL(`./${name}`, import.meta.url));
const argv = process.argv.slice(2);
// The command hook (every agent event with no serve) runs its own entry: no parser, no verb table, no issue code.
const hook = hookCall(argv);
// `board` and `graph` (exactly, or with --json) run the readers' own entry: no parser either.
const reader = hook ? null : readerCall(argv);
if (hook) {
  // Its bundle is CommonJS, required (not imported: the ESM loader would scan its 200 kB for exports first),
  // so that node's builtins load through require, without an ES module facade each, and compiled with V8's
  // code cache (code-cache.ts; cli.rolldown.config.mjs).
  const bundle = new URL('../../cli/hook.cjs', import.meta.url);
  const chosen = chooseEntry(bundle, new URL('./hook.js', import.meta.url));
  const { runHook } = (chosen === bundle ? (await import('./code-cache.js')).requireCached(decodeURIComponent(bundle.pathname)) : await import(chosen.href)) as typeof import('./hook.js');
  await runHook(hook, process.cwd());
} else if (reader) {
  const { runReader } = (await import(bundled('board-entry.js').href)) as typeof import('./board-entry.js');
  await runReader(reader, process.cwd());
} else {
  const { run } = (await import(bundled('run.js').href)) as typeof import('./run.js');
  await run(argv, process.cwd());
}
