import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { defaultLockOptions } from '../git/ref-lock.js';
import { GC_AUTO, Housekeeping, looseObjectEstimate } from '../git/housekeeping.js';
import { damagedRefs, repairDamagedRef } from '../git/ref-repair.js';
import { probeForges } from '../forge/doctor-check.js';
import { THREAD_REF_PREFIX } from '../issues/thread-store.js';
import { poolDir } from '../sessions/worktrees/pool-entries.js';
import { poolReport, refillPool } from '../sessions/worktrees/worktree-pool.js';
import { readSpecTree } from '../spec/spec-tree.js';
import { CACHE_FORMAT, ProjectionCache } from '../streams/projection-cache.js';
import { CONFIG_FILE, LOCAL_CONFIG_FILE, loadSettings } from '../project/config.js';
import { openProject, type Project } from '../compose/open-project.js';
import { checkConfinement } from './doctor-confine.js';
import { uncommittedSetup } from './init-project.js';

/** One check's outcome: what was found, and how to repair it. */
export interface Finding {
  readonly level: 'ok' | 'warn' | 'error';
  readonly what: string;
  readonly repair?: string;
}

/**
 * `trellis doctor`: checks the project in `cwd` (its repository, config, spec tree, locks, storage,
 * refs, threads, projection cache, worktree pool and forges) and answers one finding per check, each with its
 * repair. With `repair`, first does what can be done safely (git gc, damaged refs, the pool).
 */
export async function diagnoseProject(cwd: string, opts: { repair?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<Finding[]> {
  const findings: Finding[] = [];
  const add = (level: Finding['level'], what: string, repair?: string) => findings.push({ level, what, ...(repair ? { repair } : {}) });
  let p;
  try {
    p = openProject(cwd);
    add('ok', `git repository at ${p.gitdir}`);
  } catch (err) {
    add('error', (err as Error).message, "run 'git init' (or 'trellis init --git')");
    return findings;
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

  // Each configured forge: reachable, token accepted, project found (asked while the local checks run).
  const forges = settings ? probeForges(settings) : Promise.resolve([]);

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
    const uncommitted = uncommittedSetup(p.root, [CONFIG_FILE, settings.specRoot]);
    if (uncommitted) add('warn', `not committed: ${uncommitted.paths.join(', ')} (a session starts from trunk's last commit and does not see them)`, uncommitted.commit);
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
  if (opts.repair && (loose > LOOSE_REFS_WARN || looseObjects > GC_AUTO)) {
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
    if (!opts.repair) {
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
  // No file is not a damaged one: a project without threads has nothing to cache yet.
  if (!cache.exists && read.states.length === 0) add('ok', 'no projection cache yet (it is written when there are threads to cache)');
  else if (!cache.exists) add('warn', `projection cache ${cachePath} is absent though there are ${read.states.length} threads: it could not be written`, `check that ${dirname(cachePath)} is writable; reads work without it, only slower`);
  else if (cache.format !== CACHE_FORMAT) add('warn', `projection cache ${cachePath} is ${cache.format === null ? 'unreadable' : `format ${cache.format}`}`, `delete it; it is rebuilt from the refs`);
  else if (cache.streams !== read.states.length) add('warn', `projection cache holds ${cache.streams} threads, the refs ${read.states.length}`, 'delete it; it is rebuilt from the refs');
  else add('ok', `projection cache matches the refs (${cache.lines} journal lines)`);
  if (p.root && settings) await checkPool(p, opts.repair === true, add);
  if (settings) await checkConfinement(settings.sessions.confine, settings.harness, opts.env ?? process.env, add);
  for (const step of await forges) add(step.ok === true ? 'ok' : step.ok === 'warn' ? 'warn' : 'error', step.what, step.repair);
  return findings;
}

/** The warm worktree pool (DESIGN.md §15): its state and disk use; `--repair` rebuilds it. */
async function checkPool(p: Project, repair: boolean, add: (level: Finding['level'], what: string, repair?: string) => void): Promise<void> {
  const dir = poolDir(p);
  if (!existsSync(dir) && !(repair && p.settings().sessions.pool > 0)) return;
  if (repair) {
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
