/**
 * The layer table of ARCHITECTURE.md, checked: every import in `src/` (static, `export … from`, dynamic
 * `import()`) is read with TypeScript's own pre-processor, resolved to the layer it lands in, and
 * judged against the table. A new edge that runs upward or across a boundary the table forbids fails
 * here with the file, the import and the rule it breaks.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { roomOf, roomViolation, SESSION_ROOMS, sessionRoomOf, STORE_ROOMS } from './store-rooms.js';

const SRC = resolve(import.meta.dirname, '..', 'src');

/** Layers (top folders of src/) and the layers each may import. Keep in step with ARCHITECTURE.md. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  events: [],
  projections: ['events'],
  store: ['events', 'projections'],
  http: ['store', 'projections', 'events'],
  supervisor: ['http', 'store', 'projections', 'events'],
  gateway: ['http', 'store', 'projections', 'events'],
  cli: ['supervisor', 'gateway', 'http', 'store', 'projections', 'events'],
  // Browser code: pure view shapes and folds only, never anything that runs on the server.
  dashboard: ['projections'],
};

/**
 * The backend app itself: spawned as a child process by the supervisor, never imported by it or by the
 * other process layers, which may use the shared http helpers (bind, reaper, errors, assets) only.
 */
const HTTP_APP = [/^http\/app\.ts$/, /^http\/routes\//, /^http\/child-main\.ts$/];
const MAY_IMPORT_HTTP_APP = new Set(['http']);

/** Packages the pure layers may import: no I/O, no clock, no randomness. */
const PURE_PACKAGES = new Set(['yaml']);
const PURE_LAYERS = new Set(['events', 'projections']);

interface Edge {
  from: string; // path under src/
  spec: string; // the import text as written
  to: string | null; // path under src/ for a relative import, else null
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

function importsOf(file: string, src = SRC): Edge[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  const from = relative(src, file).split(sep).join('/');
  return info.importedFiles.map(({ fileName: spec }) => {
    if (!spec.startsWith('.')) return { from, spec, to: null };
    const target = relative(src, resolve(dirname(file), spec)).split(sep).join('/');
    return { from, spec, to: target.replace(/\.js$/, '.ts') };
  });
}

const layerOf = (path: string): string => path.split('/')[0]!;
const isTest = (path: string): boolean => /\.test\.tsx?$/.test(path);

/** Why an edge breaks the table, or null when it keeps it. */
function violation(edge: Edge): string | null {
  const from = layerOf(edge.from);
  if (edge.to === null) {
    if (!PURE_LAYERS.has(from) || isTest(edge.from)) return null;
    const pkg = edge.spec.startsWith('@') ? edge.spec.split('/').slice(0, 2).join('/') : edge.spec.split('/')[0]!;
    return PURE_PACKAGES.has(pkg) ? null : `${from} is pure: it imports no I/O package (${pkg})`;
  }
  if (edge.to.startsWith('..')) {
    return isTest(edge.from) ? null : 'only tests may import from outside src/';
  }
  const to = layerOf(edge.to);
  if (from === 'store' && to === 'store') return isTest(edge.from) ? null : roomViolation(edge.from, edge.to);
  if (to === from) return null;
  if (!(from in MAY_IMPORT)) return `${from} is not in the layer table`;
  // A unit test beside the code may fold with the pure layers to build its "given" state.
  if (isTest(edge.from) && PURE_LAYERS.has(to)) return null;
  if (!MAY_IMPORT[from]!.includes(to)) return `${from} may not import ${to}`;
  if (HTTP_APP.some((re) => re.test(edge.to!)) && !MAY_IMPORT_HTTP_APP.has(from)) {
    return `${from} may use http helpers only, never the app (it is spawned, not imported)`;
  }
  return null;
}

describe('the layer table', () => {
  const edges = sourceFiles(SRC).flatMap((f) => importsOf(f));

  it('reads the imports of every source file', () => {
    // A reader that found nothing would pass every rule below.
    expect(edges.filter((e) => e.to !== null).length).toBeGreaterThan(500);
    expect(edges.some((e) => e.from.startsWith('cli/') && e.to?.startsWith('store/'))).toBe(true);
    // And the rooms of store/ among them; every room of the table is a room of the tree, and the other way.
    expect(edges.filter((e) => e.from.startsWith('store/') && e.to?.startsWith('store/') && roomOf(e.from) !== roomOf(e.to)).length).toBeGreaterThan(100);
    const tree = sourceFiles(join(SRC, 'store')).map((f) => roomOf(relative(SRC, f).split(sep).join('/')));
    expect(new Set(tree)).toEqual(new Set(STORE_ROOMS));
    // The same of store/sessions/'s rooms; and no file of it is loose.
    const sessionTree = sourceFiles(join(SRC, 'store', 'sessions')).map((f) => sessionRoomOf(relative(SRC, f).split(sep).join('/')));
    expect(new Set(sessionTree.map((r) => r?.split('/')[0] ?? 'loose'))).toEqual(new Set(SESSION_ROOMS));
    expect(edges.filter((e) => e.from.startsWith('store/sessions/') && e.to?.startsWith('store/sessions/') && sessionRoomOf(e.from) !== sessionRoomOf(e.to)).length).toBeGreaterThan(100);
  });

  /** What breaks the table among `edges`, one message per edge naming the file, the import and the rule. */
  const brokenIn = (found: readonly Edge[]): string[] =>
    found.flatMap((edge) => {
      const why = violation(edge);
      return why ? [`${edge.from} imports '${edge.spec}': ${why}`] : [];
    });

  it('has no import that runs upward or across a forbidden boundary', () => {
    expect(brokenIn(edges)).toEqual([]);
  });

  it('fails on a planted tree: wrong-way imports between rooms of store/, read from files as written', () => {
    const src = mkdtempSync(join(tmpdir(), 'trellis-rooms-'));
    const plant = (path: string, text: string): void => {
      mkdirSync(dirname(join(src, path)), { recursive: true });
      writeFileSync(join(src, path), text);
    };
    try {
      plant('store/git/x.ts', "import type { IssuesProject } from '../issues/issues-project.js';\n");
      plant('store/sessions/agents/y.ts', "export { LiveProject } from '../../board/live.js';\nexport const open = () => import('../../compose/open-project.js');\n");
      plant('store/sessions/tmux/w.ts', "import type { SessionsProject } from '../log/sessions-project.js';\n");
      plant('store/sessions/agents/claude/v.ts', "import { codexHome } from '../codex/preflight-codex.js';\n");
      plant('store/issues/z.ts', "import { newThreadId } from '../project/ids.js';\nimport { git } from '../git/run-git.js';\n");
      plant('store/git/z.test.ts', "import { openProject } from '../compose/open-project.js';\n");
      const order = STORE_ROOMS.join(' < ');
      expect(brokenIn(sourceFiles(src).flatMap((f) => importsOf(f, src))).sort()).toEqual([
        `store/git/x.ts imports '../issues/issues-project.js': store/git may not import store/issues: a room of store/ imports only the rooms below it (${order})`,
        `store/sessions/agents/claude/v.ts imports '../codex/preflight-codex.js': store/sessions/agents/claude may not import store/sessions/agents/codex: one agent's folder never imports another's`,
        `store/sessions/agents/y.ts imports '../../board/live.js': store/sessions may not import store/board: a room of store/ imports only the rooms below it (${order})`,
        `store/sessions/agents/y.ts imports '../../compose/open-project.js': store/sessions may not import store/compose: a room of store/ imports only the rooms below it (${order})`,
        `store/sessions/tmux/w.ts imports '../log/sessions-project.js': store/sessions/tmux may not import store/sessions/log: a room of store/sessions/ imports only the rooms below it (${SESSION_ROOMS.join(' < ')})`,
      ]);
    } finally {
      rmSync(src, { recursive: true, force: true });
    }
  });

  it.each([
    [{ from: 'events/x.ts', spec: '../store/y.js', to: 'store/y.ts' }, 'events may not import store'],
    [{ from: 'projections/x.ts', spec: '../http/y.js', to: 'http/y.ts' }, 'projections may not import http'],
    [{ from: 'store/x.ts', spec: '../cli/y.js', to: 'cli/y.ts' }, 'store may not import cli'],
    [{ from: 'store/x.ts', spec: '../gateway/y.js', to: 'gateway/y.ts' }, 'store may not import gateway'],
    [{ from: 'http/x.ts', spec: '../cli/y.js', to: 'cli/y.ts' }, 'http may not import cli'],
    [{ from: 'supervisor/x.ts', spec: '../http/app.js', to: 'http/app.ts' }, 'never the app'],
    [{ from: 'gateway/x.ts', spec: '../http/routes/y.js', to: 'http/routes/y.ts' }, 'never the app'],
    [{ from: 'dashboard/src/x.ts', spec: '../../store/y.js', to: 'store/y.ts' }, 'dashboard may not import store'],
    [{ from: 'events/x.ts', spec: 'node:fs', to: null }, 'events is pure'],
    [{ from: 'events/x.test.ts', spec: '../store/y.js', to: 'store/y.ts' }, 'events may not import store'],
    [{ from: 'projections/x.ts', spec: 'node:crypto', to: null }, 'projections is pure'],
    [{ from: 'store/x.ts', spec: '../../test/helpers/repo.js', to: '../test/helpers/repo.ts' }, 'only tests'],
    [{ from: 'store/git/x.ts', spec: '../issues/y.js', to: 'store/issues/y.ts' }, 'store/git may not import store/issues: a room of store/ imports only the rooms below it (base < git <'],
    [{ from: 'store/safe-path.ts', spec: './project/config.js', to: 'store/project/config.ts' }, 'store/base may not import store/project'],
    [{ from: 'store/project/x.ts', spec: '../compose/open-project.js', to: 'store/compose/open-project.ts' }, 'store/project may not import store/compose'],
    [{ from: 'store/issues/x.ts', spec: '../eval/y.js', to: 'store/eval/y.ts' }, 'store/issues may not import store/eval'],
    [{ from: 'store/sessions/agents/x.ts', spec: '../../board/live.js', to: 'store/board/live.ts' }, 'store/sessions may not import store/board'],
    [{ from: 'store/sessions/agents/claude/x.ts', spec: '../../verbs/verbs.js', to: 'store/sessions/verbs/verbs.ts' }, 'store/sessions/agents may not import store/sessions/verbs'],
    [{ from: 'store/sessions/tmux/x.ts', spec: '../log/y.js', to: 'store/sessions/log/y.ts' }, 'store/sessions/tmux may not import store/sessions/log'],
    [{ from: 'store/sessions/agents/gemini/x.ts', spec: '../claude/y.js', to: 'store/sessions/agents/claude/y.ts' }, "one agent's folder never imports another's"],
    [{ from: 'store/sessions/x.ts', spec: './verbs/y.js', to: 'store/sessions/verbs/y.ts' }, 'is in no room of store/sessions/'],
    [{ from: 'store/sessions/attic/x.ts', spec: '../log/y.js', to: 'store/sessions/log/y.ts' }, 'store/sessions/attic is not in the rooms of store/sessions/'],
    [{ from: 'store/attic/x.ts', spec: '../git/y.js', to: 'store/git/y.ts' }, 'store/attic is not in the rooms of store/'],
  ])('refuses %j', (edge, why) => {
    expect(violation(edge)).toContain(why);
  });

  it.each([
    { from: 'store/x.ts', spec: '../events/y.js', to: 'events/y.ts' },
    { from: 'cli/x.ts', spec: '../supervisor/y.js', to: 'supervisor/y.ts' },
    { from: 'supervisor/x.ts', spec: '../http/bind.js', to: 'http/bind.ts' },
    { from: 'projections/x.ts', spec: 'yaml', to: null },
    { from: 'store/x.test.ts', spec: '../../test/helpers/repo.js', to: '../test/helpers/repo.ts' },
    { from: 'events/x.test.ts', spec: '../projections/y.js', to: 'projections/y.ts' },
    { from: 'store/issues/x.ts', spec: '../project/context.js', to: 'store/project/context.ts' },
    { from: 'store/sessions/verbs/x.ts', spec: '../agents/index.js', to: 'store/sessions/agents/index.ts' },
    { from: 'store/sessions/agents/claude/x.ts', spec: '../adapter.js', to: 'store/sessions/agents/adapter.ts' },
    { from: 'store/sessions/agents/index.ts', spec: './claude/claude.js', to: 'store/sessions/agents/claude/claude.ts' },
    { from: 'store/sessions/checks/x.ts', spec: '../worktrees/y.js', to: 'store/sessions/worktrees/y.ts' },
    { from: 'store/compose/x.ts', spec: '../sessions/verbs/y.js', to: 'store/sessions/verbs/y.ts' },
    { from: 'store/git/x.ts', spec: '../fs-errors.js', to: 'store/fs-errors.ts' },
    { from: 'store/git/x.test.ts', spec: '../compose/open-project.js', to: 'store/compose/open-project.ts' },
  ])('keeps %j', (edge) => {
    expect(violation(edge)).toBeNull();
  });
});

/** The source file an import lands on (`./x.js` is x.ts; the dashboard writes `./X` for X.tsx). */
function fileOf(to: string): string | null {
  for (const candidate of [to, `${to.replace(/\.ts$/, '')}.tsx`, `${to}.ts`, `${to}.tsx`, `${to}/index.ts`, `${to}/index.tsx`]) {
    const path = join(SRC, candidate);
    if (existsSync(path) && statSync(path).isFile()) return candidate;
  }
  return null;
}

/** The import loops of a graph: its strongly connected groups of more than one file (Tarjan). */
function loopsOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const loops: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const group: string[] = [];
    for (let w = stack.pop()!; ; w = stack.pop()!) {
      onStack.delete(w);
      group.push(w);
      if (w === v) break;
    }
    if (group.length > 1) loops.push(group.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return loops;
}

describe('import loops', () => {
  it('src/ has none: every file can be read after the files it imports (type-only imports count too)', () => {
    const graph = new Map<string, string[]>();
    for (const file of sourceFiles(SRC)) {
      const edges = importsOf(file).filter((e) => !isTest(e.from));
      if (isTest(relative(SRC, file))) continue;
      const from = relative(SRC, file).split(sep).join('/');
      graph.set(from, edges.flatMap((e) => (e.to && !e.to.startsWith('..') ? [fileOf(e.to)].filter((f): f is string => f !== null) : [])));
    }
    // A resolver that found nothing would find no loop either.
    expect([...graph.values()].flat().length).toBeGreaterThan(500);
    expect(loopsOf(graph)).toEqual([]);
  });

  it('finds a loop through a lazy import, and each group once', () => {
    const graph = new Map([
      ['store/project.ts', ['store/sessions/verbs/registry.ts']],
      ['store/sessions/verbs/registry.ts', ['store/sessions/verbs/verbs.ts']],
      ['store/sessions/verbs/verbs.ts', ['store/project.ts', 'events/x.ts']],
      ['events/x.ts', []],
      ['a.ts', ['b.ts']],
      ['b.ts', ['a.ts']],
    ]);
    expect(loopsOf(graph)).toEqual([['store/project.ts', 'store/sessions/verbs/registry.ts', 'store/sessions/verbs/verbs.ts'], ['a.ts', 'b.ts']]);
  });
});

/**
 * The size ceiling: small files with one idea each. A source file (src/, the dashboard's own src/ with it,
 * and bench/) over CEILING lines fails unless OVERSIZED lists it with its count, and the list only
 * shrinks: a listed file may not grow past its count, and one that comes back under the ceiling must
 * leave the list, so no file can slip back over it later.
 */
const CEILING = 350;
const ROOT = resolve(import.meta.dirname, '..');

/** Files over the ceiling today, with their line counts. Split them along their seams; never add one. */
const OVERSIZED: Readonly<Record<string, number>> = {};

/** Lines in a file as `wc -l` counts them (a last line without a newline still counts). */
function lineCount(path: string): number {
  const text = readFileSync(path, 'utf8');
  if (text === '') return 0;
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/**
 * What breaks the ceiling under `root` (paths relative to it, in `dirs`), one message per file naming
 * the file, its count and the repair; empty when the tree keeps it.
 */
function oversized(root: string, allowed: Readonly<Record<string, number>>, dirs: readonly string[] = ['src', 'bench']): string[] {
  const counts = new Map<string, number>();
  for (const dir of dirs) {
    if (!existsSync(join(root, dir))) continue;
    for (const file of sourceFiles(join(root, dir))) counts.set(relative(root, file).split(sep).join('/'), lineCount(file));
  }
  const broken: string[] = [];
  for (const [file, lines] of [...counts].sort(([a], [b]) => a.localeCompare(b))) {
    const listed = allowed[file];
    if (listed === undefined) {
      if (lines > CEILING) broken.push(`${file} has ${lines} lines, over the ceiling of ${CEILING}: split it along its seams (the list of oversized files may not grow)`);
    } else if (lines <= CEILING) {
      broken.push(`${file} has ${lines} lines, at or under the ceiling of ${CEILING}: remove it from OVERSIZED in test/layers.test.ts`);
    } else if (lines > listed) {
      broken.push(`${file} has ${lines} lines, more than the ${listed} it is listed with: split it rather than let it grow`);
    }
  }
  for (const file of Object.keys(allowed).filter((f) => !counts.has(f)).sort()) {
    broken.push(`${file} is listed in OVERSIZED but no longer exists: remove it from the list`);
  }
  return broken;
}

describe(`the size ceiling (${CEILING} lines)`, () => {
  it('holds for every source file under src/ and bench/, the listed ones not growing', () => {
    // A walker that found nothing would pass; the dashboard's own src/ is in the walk.
    expect(sourceFiles(join(ROOT, 'src')).some((f) => f.includes(`dashboard${sep}src${sep}`))).toBe(true);
    expect(sourceFiles(join(ROOT, 'bench')).length).toBeGreaterThan(0);
    expect(oversized(ROOT, OVERSIZED)).toEqual([]);
  });

  describe('on a planted tree', () => {
    const lines = (n: number): string => Array.from({ length: n }, (_, i) => `export const x${i} = ${i};\n`).join('');
    const plant = (files: Record<string, string>): string => {
      const root = mkdtempSync(join(tmpdir(), 'trellis-ceiling-'));
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      }
      return root;
    };
    const judged = (files: Record<string, string>, allowed: Record<string, number>): string[] => {
      const root = plant(files);
      try {
        return oversized(root, allowed);
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    };

    it('fails on an unlisted 351-line file, naming it, its count and the repair; 350 lines pass', () => {
      expect(judged({ 'src/store/big.ts': lines(351), 'src/store/edge.ts': lines(350) }, {})).toEqual([
        'src/store/big.ts has 351 lines, over the ceiling of 350: split it along its seams (the list of oversized files may not grow)',
      ]);
    });

    it('reaches the dashboard, .tsx files, tests beside the code and bench/', () => {
      const files = { 'src/dashboard/src/views/Big.tsx': lines(351), 'src/x/y.test.ts': lines(360), 'bench/big.ts': lines(400) };
      expect(judged(files, {}).map((m) => m.split(' ')[0])).toEqual(['bench/big.ts', 'src/dashboard/src/views/Big.tsx', 'src/x/y.test.ts']);
    });

    it('counts a last line without a newline', () => {
      expect(judged({ 'src/a.ts': `${lines(350)}export const last = 1;` }, {})).toHaveLength(1);
    });

    it('keeps a listed file at its count, fails one that grew past it', () => {
      expect(judged({ 'src/a.ts': lines(400) }, { 'src/a.ts': 400 })).toEqual([]);
      expect(judged({ 'src/a.ts': lines(401) }, { 'src/a.ts': 400 })).toEqual([
        'src/a.ts has 401 lines, more than the 400 it is listed with: split it rather than let it grow',
      ]);
    });

    it('makes the list shrink: a listed file back under the ceiling, or gone, must leave it', () => {
      expect(judged({ 'src/a.ts': lines(350) }, { 'src/a.ts': 400 })).toEqual([
        'src/a.ts has 350 lines, at or under the ceiling of 350: remove it from OVERSIZED in test/layers.test.ts',
      ]);
      expect(judged({}, { 'src/gone.ts': 400 })).toEqual(['src/gone.ts is listed in OVERSIZED but no longer exists: remove it from the list']);
    });
  });
});
