import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { TrellisError } from '../events/index.js';
import { boardBytes, type Board } from '../projections/index.js';
import { buildBoard, requireRoot } from '../store/board/board.js';
import { readPlugins, guidanceCatalog } from '../store/project/plugins.js';
import { CONFIG_FILE, LOCAL_CONFIG_FILE, loadSettings, readConfigFile } from '../store/project/config.js';
import { defaultLockOptions } from '../store/git/refs.js';
import { CACHE_FORMAT, ProjectionCache } from '../store/streams/projection-cache.js';
import { GC_AUTO, Housekeeping, looseObjectEstimate } from '../store/git/housekeeping.js';
import { THREAD_REF_PREFIX } from '../store/issues/thread-store.js';
import { openProject } from './open-project.js';
import { findRepository } from '../store/project/repository.js';
import { poolDir, poolReport, refillPool } from '../store/sessions/worktree-pool.js';
import { readSpecTree } from '../store/spec/spec-tree.js';
import { damagedRefs, repairDamagedRef } from '../store/git/ref-repair.js';
import { checkShape, type VerbContext } from './shape.js';
import { err, out, outData } from './output.js';
import { noteLines } from './render.js';

/** `trellis graph [--json]`: the board, byte for byte what GET /api/graph answers. */
export async function runGraph(ctx: VerbContext): Promise<number> {
  checkShape({ args: [], options: ['json'], usage: 'trellis graph [--json]' }, ctx);
  const { bytes, notes } = await buildBoard(openProject(ctx.cwd));
  await err(noteLines(notes));
  await outData(bytes);
  return 0;
}

/** `trellis board [--json]`: the board as a readable tree. */
export async function runBoard(ctx: VerbContext): Promise<number> {
  checkShape({ args: [], options: ['json'], usage: 'trellis board [--json]' }, ctx);
  const { board, notes } = await buildBoard(openProject(ctx.cwd));
  await err(noteLines(notes));
  await out(ctx.options.json ? boardBytes(board) : boardText(board));
  return 0;
}

export function boardText(board: Board): string {
  const f = board.freshness;
  const lines = [`${board.specRoot}/  ${board.nodes.length} nodes · ${f.open} open of ${f.threads} issues · ${f.replies} replies${f.latest ? ` · latest ${f.latest}` : ''}`];
  const children = new Map<string | null, Board['nodes'][number][]>();
  for (const n of board.nodes) children.set(n.parent, [...(children.get(n.parent) ?? []), n]);
  const walk = (parent: string | null, indent: string) => {
    const kids = children.get(parent) ?? [];
    kids.forEach((n, i) => {
      const last = i === kids.length - 1;
      const name = parent ? n.id.slice(parent.length + 1) : n.id;
      const marks = [n.status ? `[${n.status}]` : '', n.openIssues.length ? `●${n.openIssues.length} open` : '', n.problem ? `⚠ ${n.problem}` : ''].filter(Boolean).join('  ');
      lines.push(`${indent}${last ? '└─' : '├─'} ${name}  ${n.title}${marks ? `  ${marks}` : ''}`);
      walk(n.id, `${indent}${last ? '   ' : '│  '}`);
    });
  };
  walk(null, '');
  for (const o of board.overlay) lines.push(`worktree ${o.worktree} (${o.branch ?? 'detached'}, forked at ${o.forkPoint?.slice(0, 10) ?? '?'}): ${o.nodes.join(', ') || 'no spec changes'}`);
  return `${lines.join('\n')}\n`;
}

/** `trellis guidance [--json]`: the guidance catalog, the same as GET /api/guidance. */
export async function runGuidance(ctx: VerbContext): Promise<number> {
  checkShape({ args: [], options: ['json'], usage: 'trellis guidance [--json]' }, ctx);
  const p = openProject(ctx.cwd);
  const root = requireRoot(p);
  const catalog = guidanceCatalog(root, readPlugins(root, p.settings().pluginRoot));
  await out(ctx.options.json ? `${JSON.stringify(catalog, null, 2)}\n` : catalog.map((e) => `${e.id}  ${e.source.path}  ${e.source.hash.slice(0, 12)}  ${e.title}\n`).join(''));
  return 0;
}

const FIRST_NODE = `---
title: Overview
status: draft
---
# Overview

What this project is for, in a few sentences. Every other node hangs below this one.

## Goals

## Non-goals
`;

/** `trellis init [--harness <name>] [--git]`: sets a folder up as a Trellis project; running it again changes nothing. */
export async function runInit(ctx: VerbContext): Promise<number> {
  checkShape({ args: [], options: ['harness', 'git'], usage: 'trellis init [--harness <name>] [--git]' }, ctx);
  const said: string[] = [];
  let root: string;
  try {
    root = requireRoot(openProject(ctx.cwd));
  } catch (err) {
    if (!(err instanceof TrellisError && err.code === 'NOT_A_REPOSITORY')) throw err;
    if (ctx.options.git !== true) {
      throw new TrellisError('NOT_A_REPOSITORY', `${ctx.cwd} is not a git repository; run 'trellis init --git' to create one here, or 'git init' yourself`);
    }
    const r = spawnSync('git', ['init', '-q'], { cwd: ctx.cwd, encoding: 'utf8' });
    if (r.status !== 0) throw new TrellisError('GIT_FAILED', `git init failed: ${r.stderr.trim()}`);
    root = findRepository(ctx.cwd).root!;
    said.push(`created a git repository in ${root}`);
  }

  const configPath = join(root, CONFIG_FILE);
  const config = readConfigFile(configPath);
  const harness = typeof ctx.options.harness === 'string' ? ctx.options.harness : undefined;
  if (config === null) {
    writeFileSync(configPath, `${JSON.stringify({ specRoot: 'specs', ...(harness ? { harness } : {}) }, null, 2)}\n`);
    said.push(`wrote ${CONFIG_FILE}`);
  } else if (harness && config.harness !== harness) {
    writeFileSync(configPath, `${JSON.stringify({ ...config, harness }, null, 2)}\n`);
    said.push(`recorded harness '${harness}' in ${CONFIG_FILE}`);
  }

  const { specRoot } = loadSettings(root);
  const specDir = join(root, specRoot);
  const hasNode = existsSync(specDir) && readSpecTree(root, specRoot).nodes.length > 0;
  if (!hasNode) {
    mkdirSync(specDir, { recursive: true });
    writeFileSync(join(specDir, 'index.md'), FIRST_NODE, { flag: 'wx' });
    said.push(`wrote ${specRoot}/index.md, a first node`);
  }

  const ignorePath = join(root, '.gitignore');
  const ignore = existsSync(ignorePath) ? readFileSync(ignorePath, 'utf8') : '';
  if (!ignore.split('\n').some((l) => l.trim() === LOCAL_CONFIG_FILE || l.trim() === `/${LOCAL_CONFIG_FILE}`)) {
    writeFileSync(ignorePath, `${ignore}${ignore && !ignore.endsWith('\n') ? '\n' : ''}${LOCAL_CONFIG_FILE}\n`);
    said.push(`added ${LOCAL_CONFIG_FILE} to .gitignore`);
  }
  await out(said.length ? said.map((s) => `${s}\n`).join('') : `${root} is already a Trellis project; nothing to do\n`);
  return 0;
}

interface Finding {
  readonly level: 'ok' | 'warn' | 'error';
  readonly what: string;
  readonly repair?: string;
}

/** `trellis doctor [--json]`: checks the project; each finding carries its repair; exit 1 when any is an error. */
export async function runDoctor(ctx: VerbContext): Promise<number> {
  checkShape({ args: [], options: ['json', 'repair'], usage: 'trellis doctor [--json] [--repair]' }, ctx);
  const findings: Finding[] = [];
  const add = (level: Finding['level'], what: string, repair?: string) => findings.push({ level, what, ...(repair ? { repair } : {}) });
  let p;
  try {
    p = openProject(ctx.cwd);
    add('ok', `git repository at ${p.gitdir}`);
  } catch (err) {
    add('error', (err as Error).message, "run 'git init' (or 'trellis init --git')");
    return report(ctx, findings);
  }
  if (!p.root) add('error', 'the repository is bare: the spec tree needs a working tree', 'run trellis in a checkout of this repository');

  let settings;
  if (p.root) {
    try {
      settings = loadSettings(p.root);
      add(settings.sources.committed ? 'ok' : 'warn', settings.sources.committed ? `${CONFIG_FILE} is valid` : `no ${CONFIG_FILE}: defaults apply`, settings.sources.committed ? undefined : "run 'trellis init'");
    } catch (err) {
      add('error', (err as Error).message, `fix ${CONFIG_FILE} (it must be a JSON object) or move it aside and run 'trellis init'`);
    }
    if (existsSync(join(p.root, LOCAL_CONFIG_FILE))) {
      const ignored = spawnSync('git', ['check-ignore', '-q', LOCAL_CONFIG_FILE], { cwd: p.root }).status === 0;
      if (!ignored) add('error', `${LOCAL_CONFIG_FILE} is not ignored by git: what it holds could be committed`, `add '${LOCAL_CONFIG_FILE}' to .gitignore`);
    }
  }

  if (p.root && settings) {
    let tree;
    try {
      tree = readSpecTree(p.root, settings.specRoot);
    } catch (err) {
      add('error', (err as Error).message, `make ${settings.specRoot} a real folder inside the project`);
      tree = { nodes: [] as never[] };
    }
    if (tree.nodes.length === 0) add('warn', `no spec nodes under ${settings.specRoot}/`, "run 'trellis init' to write a first node");
    else add('ok', `${tree.nodes.length} spec nodes under ${settings.specRoot}/`);
    for (const n of tree.nodes) if (n.problem) add('error', `${n.path}: ${n.problem}`, `fix the front matter of ${n.path}`);
  }

  const locks = findLocks(join(p.gitdir, THREAD_REF_PREFIX));
  const { staleMs } = defaultLockOptions();
  for (const lock of locks) {
    const age = Date.now() - statSync(lock).mtimeMs;
    if (age > staleMs) add('error', `stale lock ${lock} (${Math.round(age / 1000)}s old) blocks writes to its thread`, `if no trellis or git process is writing, rm '${lock}'`);
    else add('warn', `lock ${lock} is held right now`, 'run doctor again in a moment');
  }

  let loose = countLoose(join(p.gitdir, THREAD_REF_PREFIX));
  let looseObjects = looseObjectEstimate(p.gitdir);
  if (ctx.options.repair && (loose > LOOSE_REFS_WARN || looseObjects > GC_AUTO)) {
    // The repair of untidy storage is git's own: a full gc packs objects and refs (safe beside writers).
    const gc = await new Housekeeping(p.gitdir).run({ force: true });
    if (gc.code === 0) add('ok', `packed ${loose} loose issue refs and about ${looseObjects} loose objects (git gc)`);
    else add('error', `git gc failed: ${gc.stderr.trim().split('\n')[0]}`, "run 'git gc' yourself and read what it says");
    loose = countLoose(join(p.gitdir, THREAD_REF_PREFIX));
    looseObjects = looseObjectEstimate(p.gitdir);
  }
  if (looseObjects > GC_AUTO) {
    add('warn', `about ${looseObjects} loose objects: more than git's gc.auto (${GC_AUTO}); reads slow down until they are packed`, "run 'trellis doctor --repair' (it runs git gc); writes also start a background 'git gc --auto'");
  }
  if (loose > LOOSE_REFS_WARN) {
    add('warn', `${loose} issue refs are loose files: every full read opens each one (about 40 ms per 10,000)`, "run 'git pack-refs --all' (git gc does it too); reads of packed refs take about 2 ms");
  }

  // Damaged refs (zero-length or garbage, as a power cut leaves them) first: reads skip them, so the
  // counts below would otherwise hide what is missing.
  const stores = [p.threads, p.evals, p.sessionLog];
  const cachedTip = (ref: string) => {
    const store = stores.find((s) => ref.startsWith(s.kind.refPrefix));
    return store?.cachedTip(ref.slice(store.kind.refPrefix.length));
  };
  for (const d of damagedRefs(p.gitdir)) {
    if (!ctx.options.repair) {
      add('error', `damaged ref ${d.ref} (${d.damage}): reads skip it, and git's own fetch, push and gc fail on it`, "run 'trellis doctor --repair': it restores the ref from its reflog or the projection cache, or moves it aside");
      continue;
    }
    const r = await repairDamagedRef(p.gitdir, d, cachedTip);
    if (r.outcome === 'restored') add('ok', `restored damaged ref ${r.ref} (${d.damage}) to ${r.oid}, from the ${r.from}`);
    else if (r.outcome === 'moved aside') add('warn', `moved damaged ref ${r.ref} (${d.damage}) aside to ${r.to}: no reflog or cached tip named a commit to restore`, `if you know its last commit, 'git update-ref ${r.ref} <commit>'; otherwise its history is gone from this clone (a 'trellis sync' brings back what a remote holds)`);
    else add('error', `could not repair ${r.ref}: ${r.reason}`);
  }

  const read = await p.threads.all();
  for (const problem of read.problems) add('error', `thread ${problem.id} is unreadable at ${problem.commit}: ${problem.reason}`, `inspect with 'git log ${problem.ref}'; reset the ref to the last good commit with 'git update-ref ${problem.ref} <commit>'`);
  add('ok', `${read.states.length} threads readable`);
  const cachePath = join(p.gitdir, 'trellis/cache/issues.json');
  const cache = new ProjectionCache(cachePath).inspect();
  // all() above has just brought the cache in line with the refs; a mismatch now means it cannot be written.
  if (cache.format !== CACHE_FORMAT) add('warn', `projection cache ${cachePath} is ${cache.format === null ? 'unreadable' : `format ${cache.format}`}`, `delete it; it is rebuilt from the refs`);
  else if (cache.streams !== read.states.length) add('warn', `projection cache holds ${cache.streams} threads, the refs ${read.states.length}`, 'delete it; it is rebuilt from the refs');
  else add('ok', `projection cache matches the refs (${cache.lines} journal lines)`);
  if (p.root && settings) await checkPool(p, ctx, add);
  return report(ctx, findings);
}

/** The warm worktree pool (DESIGN.md §15): its state and disk use; `--repair` rebuilds it. */
async function checkPool(p: ReturnType<typeof openProject>, ctx: VerbContext, add: (level: Finding['level'], what: string, repair?: string) => void): Promise<void> {
  const dir = poolDir(p);
  if (!existsSync(dir) && !(ctx.options.repair && p.settings().sessions.pool > 0)) return;
  if (ctx.options.repair) {
    try {
      const r = await refillPool(p, process.env, { rebuild: true });
      if (!r.ran) add('warn', 'the worktree pool is being refilled by another process right now', 'run doctor --repair again in a moment');
      else add('ok', `rebuilt the worktree pool: ${r.removed} removed, ${r.made} made`);
    } catch (err) {
      add('error', `cannot rebuild the worktree pool: ${(err as Error).message}`, `read what git says, then run 'trellis doctor --repair' again`);
    }
  }
  const pool = await poolReport(p);
  const mb = Math.round(pool.bytes / 2 ** 20);
  const what = `worktree pool: ${pool.ready} of ${pool.size} ready (${pool.behind} behind trunk), ${pool.other} other, ${mb} MB in ${pool.dir}`;
  if (pool.other > 0) add('warn', what, `a worktree being made or claimed right now is fine; a pooled worktree that holds changes is kept (never removed): look at it, then 'trellis doctor --repair'`);
  else add('ok', what);
}

/** Above this many loose issue refs, doctor suggests packing them. */
const LOOSE_REFS_WARN = 5_000;

function countLoose(dir: string): number {
  try {
    return readdirSync(dir, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? countLoose(join(dir, e.name)) : e.name.endsWith('.lock') ? 0 : 1), 0);
  } catch {
    return 0;
  }
}

function findLocks(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? findLocks(join(dir, e.name)) : e.name.endsWith('.lock') ? [join(dir, e.name)] : []));
  } catch {
    return [];
  }
}

async function report(ctx: VerbContext, findings: Finding[]): Promise<number> {
  await out(
    ctx.options.json
      ? `${JSON.stringify(findings, null, 2)}\n`
      : findings.map((f) => `${f.level === 'ok' ? 'ok   ' : f.level === 'warn' ? 'warn ' : 'error'}  ${f.what}${f.repair ? `\n       repair: ${f.repair}` : ''}\n`).join(''),
  );
  return findings.some((f) => f.level === 'error') ? 1 : 0;
}
