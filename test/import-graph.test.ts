/**
 * What a verb loads at start-up is what it uses (issue 40): the static import graph of each CLI verb's
 * module, as the compiled code (dist/, type-only imports gone) has it, reaches none of the parts that
 * cost tens of milliseconds to load or compile and that the verb does not use: arktype and the forge
 * schemas compiled with it, yaml, write-file-atomic, undici, the forge drivers, the HTTP layer, the
 * gateway and the supervisors. A dynamic import (`await import(…)`) is where such a part is loaded when
 * used. A failure names the chain of imports that pulls the part in.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const DIST = resolve(import.meta.dirname, '../dist/src');

/** Parsed once per text: the verbs share most of their graphs. */
const parsed = new Map<string, string[]>();

/** The specifiers a compiled module imports statically (top-level import and export … from). */
function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const known = parsed.get(text);
  if (known) return known;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, false, ts.ScriptKind.JS);
  const specs = source.statements.flatMap((s) => ((ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) && s.moduleSpecifier && ts.isStringLiteral(s.moduleSpecifier) ? [s.moduleSpecifier.text] : []));
  parsed.set(text, specs);
  return specs;
}

/** A package's name from a bare specifier: `@ark/schema/x` → `@ark/schema`. */
const packageOf = (spec: string): string => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);

/**
 * The first thing `entry` reaches statically that `forbidden` names (a package, or a module path under
 * `root`), with the chain of modules that leads to it; null when it reaches none.
 */
export function forbiddenReach(root: string, entry: string, forbidden: (target: string) => boolean): string[] | null {
  const start = resolve(root, entry);
  const cameFrom = new Map<string, string | null>([[start, null]]);
  const queue = [start];
  const chain = (to: string, from: string) => {
    const out = [to];
    for (let at: string | null = from; at !== null; at = cameFrom.get(at) ?? null) out.unshift(relative(root, at));
    return out;
  };
  while (queue.length) {
    const file = queue.shift()!;
    for (const spec of staticImports(file)) {
      if (!spec.startsWith('.')) {
        const name = spec.startsWith('node:') ? spec : packageOf(spec);
        if (forbidden(name)) return chain(name, file);
        continue;
      }
      const target = resolve(dirname(file), spec);
      if (cameFrom.has(target)) continue;
      if (forbidden(relative(root, target))) return chain(relative(root, target), file);
      cameFrom.set(target, file);
      queue.push(target);
    }
  }
  return null;
}

/** Never loaded at start-up by any verb below: each is loaded where it is used. */
const NEVER = [
  /^arktype$/,
  /^@ark\//,
  /^yaml$/,
  /^write-file-atomic$/,
  /^undici$/,
  /^isomorphic-git$/,
  /^hono$/,
  /^@hono\//,
  /^web-push$/,
  /^gateway\//,
  /^http\//,
  /^supervisor\//,
  /^store\/forge\/(github|gitlab|forgejo|reads|gitlab-reads|forgejo-reads|http)\.js$/,
];
/** The sessions' machinery (tmux, its control client, the agents' adapters), which no issue verb uses. */
const SESSIONS = [/^store\/sessions\/(tmux|tmux-exec|control-client|pane-capture|runtime|verbs)\.js$/, /^store\/sessions\/adapters\//];

/**
 * What the command hook (`session signal`, every agent event with no serve) does not use: the other session
 * verbs and what they load (launching, delivering a prompt, the worktree pool, the merge, the pane's screen),
 * and the endpoint record (read only when a launch asks for the serve's url).
 */
const HOOK = [
  /^cli\/session-commands\.js$/,
  /^store\/sessions\/(runtime|verbs|delivery|worktree-pool|queue|preflight|screen-watch|pane-capture|confine|wip|review|merge-gate|checks)\.js$/,
  /^store\/host\//,
];

/**
 * What the command hook's own entry (hook.ts, which bin.ts runs for `session signal <id> <event>`) does not
 * use beyond HOOK: the command line's parser and verb table, and the issue, eval and forge code a whole
 * project opens (issue 40: 99 ms of CPU per event, 34 over node, half of it these).
 */
const HOOK_ENTRY = [
  ...HOOK,
  /^cac$/,
  /^cli\/(main|run|open-project|issue-commands|unknown-action|input|render)\.js$/,
  /^store\/(issues|eval|forge)\//,
  /^store\/compose\/open-project\.js$/,
  /^store\/sessions\/loop-in\.js$/,
];

/**
 * What the readers (board, graph, session ls) do not use: the session verbs that launch, deliver and close
 * (their tmux, confinement, worktree pool, usage and budget), the agents' adapters, the overlap tracker and
 * the checks it runs (loaded only when two live sessions can overlap), the hook's signal verb, and init,
 * doctor and guidance (issue 40: board loaded every one of them, 82 ms over node; session ls 64).
 */
const READER = [
  /^store\/sessions\/(agents|confine|usage|worktrees)\//,
  // What opening a project loads for every verb (open-project.ts: a held prompt's queue, the loop-in) stays.
  /^store\/sessions\/tmux\/(?!input-queue\.js$)/,
  /^store\/sessions\/verbs\/(?!list-sessions\.js$|loop-in\.js$)/,
  /^store\/sessions\/checks\/(?!overlap-pairs\.js$|overlap-candidates\.js$)/,
  /^store\/setup\//,
  /^cli\/(session-commands|session-signal-command|project-commands|cli-runtime)\.js$/,
  // The writers' hashes and random ids (store/lazy-builtins.ts): ~6 ms of board's start-up, used by no read.
  /^node:crypto$/,
];

const VERBS: readonly [what: string, entry: string, extra: readonly RegExp[]][] = [
  ['every command (parsing, --help)', 'cli/run.js', SESSIONS],
  ['issue reply, ls, show, open (the issue verbs)', 'cli/issue-commands.js', SESSIONS],
  ['the command hook (session signal)', 'cli/session-signal-command.js', HOOK_ENTRY],
  ['the command hook\'s own entry (bin.ts runs it for session signal)', 'cli/hook.js', HOOK_ENTRY],
  ['the session verbs', 'cli/session-commands.js', []],
  ['init, doctor, guidance', 'cli/project-commands.js', []],
  ['board, graph', 'cli/board-command.js', READER],
  ['session ls', 'cli/session-ls-command.js', READER],
  ['status', 'cli/status-command.js', []],
  ['sync', 'cli/sync-commands.js', []],
  ['evidence put/get', 'cli/evidence-commands.js', SESSIONS],
];

describe('what a verb loads at start-up', () => {
  it.each(VERBS)('%s: none of the parts it does not use', (_what, entry, extra) => {
    const rules = [...NEVER, ...extra];
    expect(forbiddenReach(DIST, entry, (target) => rules.some((r) => r.test(target)))).toBeNull();
  });

  it('a serve child and the gateway start without arktype: request bodies compile their schema on first use (http/body.ts)', () => {
    const ark = (t: string) => /^arktype$|^@ark\//.test(t);
    expect(forbiddenReach(DIST, 'http/child-main.js', ark)).toBeNull();
    expect(forbiddenReach(DIST, 'gateway/hub-server.js', ark)).toBeNull();
  });

  it("the bundled hook (dist/cli/hook.cjs, what the executable runs) holds neither run.js nor the parser nor a verb family's code", () => {
    const bundle = resolve(import.meta.dirname, '../dist/cli');
    // One CommonJS file: what it holds is its source map's sources, what it loads its require() calls.
    const file = join(bundle, 'hook.cjs');
    const modules = (JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] }).sources.map((s) => relative(DIST, resolve(bundle, s)));
    // A lazy import() is bundled as a require() in a promise's callback (dynamicImportInCjs: false): not loaded at start.
    const required = [...readFileSync(file, 'utf8').matchAll(/(then\(\(\) => \/\* @__PURE__ \*\/ __toESM\()?\brequire\("([^"]+)"\)/g)].filter((m) => !m[1]).map((m) => m[2]!);
    expect(modules).toContain('cli/hook.js');
    expect(required).toContain('node:fs');
    const rules = [...NEVER, ...HOOK_ENTRY];
    expect(modules.filter((m) => rules.some((r) => r.test(m)))).toEqual([]);
    expect(required.filter((spec) => !spec.startsWith('.') && !spec.startsWith('node:') && rules.some((r) => r.test(packageOf(spec))))).toEqual([]);
    // The whole command line's entry, an ES module, does reach the parser: the check above would see it there.
    const rulesRun = (t: string) => t === 'cac' || NEVER.some((r) => r.test(t));
    expect(forbiddenReach(bundle, 'run.js', rulesRun)).toEqual(['run.js', 'cac']);
  });

  it('names the chain that pulls a part in: a planted static import fails, the same import made lazy passes', () => {
    const root = mkdtempSync(join(tmpdir(), 'trellis-import-graph-'));
    try {
      const write = (path: string, text: string) => {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      };
      write('cli/verb.js', "import { a } from '../store/a.js';\nexport const run = () => a;\n");
      write('store/a.js', "export { b } from './b.js';\nexport const a = 1;\n");
      write('store/b.js', "import { type } from 'arktype';\nexport const b = type;\n");
      write('store/lazy.js', "export const later = () => import('undici');\n");
      const rules = (t: string) => NEVER.some((r) => r.test(t));
      expect(forbiddenReach(root, 'cli/verb.js', rules)).toEqual(['cli/verb.js', 'store/a.js', 'store/b.js', 'arktype']);
      write('store/b.js', "export const b = () => import('arktype');\n");
      write('store/a.js', "import './lazy.js';\nexport { b } from './b.js';\nexport const a = 1;\n");
      expect(forbiddenReach(root, 'cli/verb.js', rules)).toBeNull();
      // A forbidden module of the project itself, not only a package.
      write('store/a.js', "import '../gateway/x.js';\nexport const a = 1;\n");
      write('gateway/x.js', 'export {};\n');
      expect(forbiddenReach(root, 'cli/verb.js', rules)).toEqual(['cli/verb.js', 'store/a.js', 'gateway/x.js']);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  /*
   * The graphs above are each verb's module; this is what a verb loads as run: the CLI (bundled, as the
   * executable runs it) in a project, each loaded file recorded by a module hook and a chunk read back
   * into the modules it holds through its source map. It fails if the command line sends a verb to a
   * module that loads more than it uses (before issue 40's cut, board went through project-commands.js
   * and session ls through session-commands.js: both loaded the adapters, tmux and the session verbs).
   */
  it.each([
    ['board', ['board']],
    ['graph', ['graph']],
    ['session ls', ['session', 'ls']],
  ])('%s, as the CLI runs it: none of what a reader does not use', (_what, args) => {
    const root = mkdtempSync(join(tmpdir(), 'trellis-import-run-'));
    try {
      const { repo, env } = project(root);
      const r = loadedModules(root, repo, env, args);
      expect(r.stderr.replace(/^no open sessions.*\n/, '')).toBe('');
      expect(r.status).toBe(0);
      const rules = [...NEVER, ...READER];
      expect(r.modules.filter((m) => rules.some((rule) => rule.test(m)))).toEqual([]);
      expect(r.modules).toContain(args[0] === 'session' ? 'cli/session-ls-command.js' : 'cli/board-command.js');
      // board and graph run their own entry (bin.ts → board-entry.js): not the command line's parser.
      if (args[0] !== 'session') expect(r.modules.filter((m) => m === 'cac' || m === 'cli/run.js' || m === 'cli/main.js')).toEqual([]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  /*
   * The command hook (every agent event with no serve), as the executable runs it (bin.js → the hook's own
   * entry), with a module hook recording what loads: none of what no verb loads at start-up (the server, the
   * gateway, the supervisors, arktype, undici, isomorphic-git …) nor the command line's parser, verb table
   * and issue, eval and forge code. It loads every agent's adapter (a static table: loading only the
   * session's own through a dynamic import of a chunk of its own saved no measurable CPU per event), so a
   * claude and a codex session's hook are both run.
   */
  it('the command hook, as the executable runs it: none of the server, gateway, arktype, undici, nor the parser or the issue verbs', async () => {
    const root = mkdtempSync(join(tmpdir(), 'trellis-import-hook-'));
    try {
      const { repo, env } = project(root);
      const { openProject } = await import('../src/store/compose/open-project.js');
      const p = openProject(repo);
      for (const [id, harness] of [['hookclaude1', 'claude'], ['hookcodex1', 'codex']] as const) {
        const meta = { by: 'test', at: new Date().toISOString() };
        await p.sessionLog.write(id, { type: 'spawn', harness, task: 't', nodes: [], issue: null, base: '0'.repeat(40), branch: `trellis/${id}`, worktree: join(root, id), ...meta, source: 'user' });
        await p.sessionLog.write(id, { type: 'start', ...meta, source: 'supervisor' });
        const r = loadedModules(root, repo, env, ['session', 'signal', id, harness === 'claude' ? 'UserPromptSubmit' : 'turn-end'], '{}');
        expect(r.stderr).toBe('');
        expect(r.status).toBe(0);
        expect(r.modules).toContain('cli/hook.js');
        expect(r.modules).toContain(`store/sessions/agents/${harness}/${harness}.js`);
        const rules = [...NEVER, ...HOOK_ENTRY];
        expect(r.modules.filter((m) => rules.some((rule) => rule.test(m)))).toEqual([]);
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

/** A project with one commit and trellis.json, and the environment its CLI runs in. */
function project(root: string): { repo: string; env: NodeJS.ProcessEnv } {
  const repo = join(root, 'repo');
  const env: NodeJS.ProcessEnv = { ...process.env, TRELLIS_HOME: join(root, 'home'), GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' };
  delete env.TMUX_PANE;
  spawnSync('git', ['init', '-q', '-b', 'main', repo]);
  spawnSync('git', ['-C', repo, 'commit', '-q', '--allow-empty', '-m', 'init'], { env });
  writeFileSync(join(repo, 'trellis.json'), '{}\n');
  return { repo, env };
}

/**
 * Runs the executable with `args` in `repo`, a module hook recording each file it loads, and names the
 * modules loaded: a bundle's chunk read back into the modules it holds through its source map.
 */
function loadedModules(root: string, repo: string, env: NodeJS.ProcessEnv, args: readonly string[], input?: string): { status: number | null; stderr: string; modules: string[] } {
  const log = join(root, 'loads.txt');
  writeFileSync(log, '');
  writeFileSync(join(root, 'hooks.mjs'), `import { appendFileSync } from 'node:fs';\nexport async function load(url, context, next) { appendFileSync(${JSON.stringify(log)}, url + '\\n'); return next(url, context); }\n`);
  writeFileSync(join(root, 'register.mjs'), `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(root, 'hooks.mjs')).href)});\n`);
  // What is required (the command hook's CommonJS bundle loads its chunks and packages so) is recorded too.
  writeFileSync(join(root, 'require.cjs'), `const Module = require('node:module');\nconst { appendFileSync } = require('node:fs');\nconst { pathToFileURL } = require('node:url');\nconst load = Module._load;\nModule._load = function (request, parent, isMain) {\n  try { const f = Module._resolveFilename(request, parent, isMain); if (f.startsWith('/')) appendFileSync(${JSON.stringify(log)}, pathToFileURL(f).href + '\\n'); } catch {}\n  return load.apply(this, arguments);\n};\n`);
  const bin = resolve(import.meta.dirname, '../dist/src/cli/bin.js');
  const r = spawnSync(process.execPath, ['--import', pathToFileURL(join(root, 'register.mjs')).href, '--require', join(root, 'require.cjs'), bin, ...args], { cwd: repo, env, input: input ?? '', encoding: 'utf8' });
  const loaded = readFileSync(log, 'utf8').split('\n').filter((u) => u.startsWith('file:')).map((u) => fileURLToPath(u));
  // The command hook's bundle is compiled by code-cache.ts (with V8's code cache), which no module hook sees.
  if (loaded.some((f) => f.endsWith(join('dist', 'src', 'cli', 'code-cache.js')))) loaded.push(resolve(import.meta.dirname, '../dist/cli/hook.cjs'));
  // The bundle ran (a bundled file was loaded), so the check reads what the executable loads.
  expect(loaded.some((f) => f.includes(`${join('dist', 'cli')}${sep}`))).toBe(true);
  const modules = loaded.flatMap((file): string[] => {
    const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(file);
    if (pkg) return [pkg[1]!];
    if (file.startsWith(DIST)) return [relative(DIST, file)];
    if (!existsSync(`${file}.map`)) return [];
    const map = JSON.parse(readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
    return map.sources.map((s) => relative(DIST, resolve(dirname(file), s)));
  });
  return { status: r.status, stderr: r.stderr, modules };
}
