import { childProcess } from '../../lazy-builtins.js';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { isCode } from '../../fs-errors.js';
import { gitRaw } from '../../git/run-git.js';
import { packageRoot } from '../../package-root.js';
import type { ProjectContext } from '../../project/context.js';
import { alive, dropMarker, markReady, poolDir, readPool, take } from './pool-entries.js';
import { mainRoot, trunkCommit } from './worktree.js';
import type { PoolReport } from '../../../projections/resources.js';

export type { PoolReport } from '../../../projections/resources.js';

/*
 * The warm worktree pool (DESIGN.md §15): a spawn claims a worktree made ahead of time instead of checking
 * out the whole tree; a refill keeps one ready at trunk's tip. The pool's folder and the markers that
 * hand its worktrees over (one rename per change of state) are pool-entries.ts.
 */

/**
 * Claims a pooled worktree for a new session: moves it to `path` and switches it to a new `branch` at
 * `base` (git checks out only what differs from the commit it was at). Returns false when the pool has
 * none ready or the one taken cannot be switched cleanly; the caller then adds a worktree the plain way.
 * A worktree that could not be switched goes back to the pool without a marker, untouched.
 */
export async function claimPooled(p: ProjectContext, path: string, branch: string, base: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  if (p.settings().sessions.pool === 0) return false;
  const dir = poolDir(p, env);
  const root = mainRoot(p);
  // Prefer one already at `base`: then the switch checks out nothing.
  const ready = readPool(dir).filter((e) => e.state === 'ready' && e.present).sort((a, b) => Number(b.commit === base) - Number(a.commit === base));
  for (const entry of ready) {
    const claimed = `${entry.name}.claimed.${process.pid}`;
    if (!take(dir, entry.marker!, claimed)) continue;
    mkdirSync(dirname(path), { recursive: true });
    const moved = await gitRaw(root, ['worktree', 'move', entry.path, path]);
    if (moved.code !== 0) {
      // Nothing changed: it is still a ready worktree at its commit.
      take(dir, claimed, `${entry.name}.ready`);
      continue;
    }
    const switched = detachedAt(path) === base ? await branchHere(root, path, branch, base) : await gitRaw(path, ['switch', '--quiet', '--no-guess', '-c', branch, base]);
    if (switched.code !== 0) {
      // Back where it was, with no marker: the next refill removes it if it holds nothing.
      await gitRaw(root, ['worktree', 'move', path, entry.path]);
      dropMarker(dir, claimed);
      continue;
    }
    dropMarker(dir, claimed);
    return true;
  }
  return false;
}

/** The commit a worktree's detached HEAD is at, read from its HEAD file (no git process); null otherwise. */
function detachedAt(path: string): string | null {
  try {
    const gitdir = /^gitdir: (.*)$/m.exec(readFileSync(join(path, '.git'), 'utf8'))?.[1]?.trim();
    const head = gitdir ? readFileSync(join(gitdir, 'HEAD'), 'utf8').trim() : '';
    return /^[0-9a-f]{40,64}$/.test(head) ? head : null;
  } catch {
    return null;
  }
}

/**
 * Puts a clean worktree whose HEAD is already at `base` on a new `branch` there: the branch made, HEAD
 * pointed at it. Files and index are already those of `base`, so nothing is checked out or even looked
 * at (a switch would stat every file: a third of a second at 50,000 files).
 */
async function branchHere(root: string, path: string, branch: string, base: string): Promise<{ code: number }> {
  const made = await gitRaw(root, ['branch', '--no-track', branch, base]);
  if (made.code !== 0) return made;
  const pointed = await gitRaw(path, ['symbolic-ref', '-m', `trellis: claimed for ${branch}`, 'HEAD', `refs/heads/${branch}`]);
  if (pointed.code !== 0) await gitRaw(root, ['branch', '-D', branch]);
  return pointed;
}

/**
 * Starts a refill in the background, at idle priority, in a process of its own (it outlives a CLI spawn).
 * Nothing to do when the pool is off, or when `onlyIfMade` and no pool was ever made (a trunk that moves
 * in a project that never spawned makes no pool).
 */
export function kickRefill(p: ProjectContext, env: NodeJS.ProcessEnv = process.env, opts: { onlyIfMade?: boolean } = {}): void {
  if (p.settings().sessions.pool === 0) return;
  const dir = poolDir(p, env);
  if (opts.onlyIfMade && !existsSync(dir)) return;
  if (!needsRefill(p, dir)) return;
  const main = join(packageRoot().dir, 'dist/src/store/compose/pool-refill-main.js');
  const child = childProcess().spawn(process.execPath, [main, mainRoot(p)], { env, detached: true, stdio: 'ignore' });
  child.on('error', () => {});
  child.unref();
}

/** Whether the pool lacks a ready worktree at trunk's tip, from the markers alone (no git process). */
function needsRefill(p: ProjectContext, dir: string): boolean {
  const entries = readPool(dir);
  if (entries.some((e) => e.state === 'making' && alive(e.pid))) return false;
  const tip = trunkTipFromFiles(p);
  const fresh = entries.filter((e) => e.state === 'ready' && e.present && (tip === null || e.commit === tip)).length;
  return fresh < p.settings().sessions.pool || entries.some((e) => e.state !== 'ready' || !e.present);
}

/** Trunk's tip read from the ref files (loose, then packed); null when it cannot be told cheaply. */
function trunkTipFromFiles(p: ProjectContext): string | null {
  try {
    const root = mainRoot(p);
    let ref = p.settings().trunk ? `refs/heads/${p.settings().trunk}` : null;
    if (!ref) {
      const head = readFileSync(join(root, '.git', 'HEAD'), 'utf8').trim();
      if (!head.startsWith('ref: ')) return head;
      ref = head.slice(5);
    }
    try {
      return readFileSync(join(p.gitdir, ref), 'utf8').trim();
    } catch {
      const line = readFileSync(join(p.gitdir, 'packed-refs'), 'utf8').split('\n').find((l) => l.endsWith(` ${ref}`));
      return line?.slice(0, 40) ?? null;
    }
  } catch {
    return null;
  }
}

const LOCK = 'refill.lock';

/** Takes the pool's refill lock (one refill at a time per pool); a dead holder's lock is taken over. */
function lock(dir: string): boolean {
  const path = join(dir, LOCK);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (err) {
      if (!isCode(err, 'EEXIST')) throw err;
      const text = readFileSync(path, 'utf8').trim();
      // An empty lock is one being taken right now (its pid not yet written): held.
      if (text === '' && Date.now() - statSync(path).mtimeMs < 5_000) return false;
      if (alive(Number(text) || null)) return false;
      // The holder died: its lock goes; a concurrent taker loses the race on 'wx' above.
      rmSync(path, { force: true });
    }
  }
  return false;
}

export interface RefillResult {
  readonly made: number;
  readonly refreshed: number;
  readonly removed: number;
  /** Worktrees left alone because git says they hold changes (never removed: DESIGN.md §9, lossless). */
  readonly held: readonly string[];
  /** False when another process's refill is running (nothing done). */
  readonly ran: boolean;
}

/**
 * Brings the pool to `sessions.pool` clean worktrees at trunk's tip: clears what a crash left (a dead
 * process's half-made worktree; a loose worktree that holds no changes), moves ready ones that are behind
 * forward (checkout of the difference), makes new ones. `rebuild` first removes every clean pooled
 * worktree (doctor --repair). Runs under the pool's lock; a second refill at once does nothing.
 */
export async function refillPool(p: ProjectContext, env: NodeJS.ProcessEnv = process.env, opts: { rebuild?: boolean } = {}): Promise<RefillResult> {
  const size = p.settings().sessions.pool;
  const dir = poolDir(p, env);
  const root = mainRoot(p);
  const result = { made: 0, refreshed: 0, removed: 0, held: [] as string[], ran: true };
  if (size === 0 && !existsSync(dir)) return result;
  mkdirSync(dir, { recursive: true });
  if (!lock(dir)) return { ...result, ran: false };
  try {
    // Trunk may move while we work: go round again (a few times at most) until the pool is at its tip.
    for (let round = 0; round < 3; round++) {
      const tip = (await trunkCommit(p)).commit;
      const rebuild = opts.rebuild === true && round === 0;
      let ready = 0;
      for (const e of readPool(dir)) {
        if (e.state === 'making' || e.state === 'claimed') {
          if (alive(e.pid) && e.pid !== process.pid) continue;
          dropMarker(dir, e.marker!);
          if (!e.present) continue;
          // A dead maker's worktree was never ready: nobody worked in it. A dead claimer's, still here,
          // was never switched to a session: the loose rule decides (removed only if it holds nothing).
          if (e.state === 'making') {
            await removeWorktreeDir(root, e.path);
            result.removed++;
          } else await removeIfClean(root, e.path, result);
          continue;
        }
        if (e.state === 'loose') {
          await removeIfClean(root, e.path, result);
          continue;
        }
        // Ready.
        if (!e.present) {
          dropMarker(dir, e.marker!);
          continue;
        }
        const making = `${e.name}.making.${process.pid}`;
        if (rebuild || ready >= size) {
          // Unmarked first (so no spawn claims it meanwhile), then removed if it holds nothing.
          if (!take(dir, e.marker!, making)) continue;
          dropMarker(dir, making);
          await removeIfClean(root, e.path, result);
          continue;
        }
        if (e.commit === tip) {
          ready++;
          continue;
        }
        if (!take(dir, e.marker!, making)) continue;
        const moved = await gitRaw(e.path, ['checkout', '--quiet', '--detach', tip]);
        if (moved.code !== 0) {
          // Could not move forward (it holds changes that conflict): hand it to the loose rule.
          dropMarker(dir, making);
          await removeIfClean(root, e.path, result);
          continue;
        }
        markReady(dir, e.name, making, tip);
        result.refreshed++;
        ready++;
      }
      while (ready < size) {
        const name = `wt-${randomBytes(6).toString('hex')}`;
        const making = `${name}.making.${process.pid}`;
        writeFileSync(join(dir, making), '');
        const added = await gitRaw(root, ['worktree', 'add', '--quiet', '--detach', join(dir, name), tip]);
        if (added.code !== 0) {
          await removeWorktreeDir(root, join(dir, name));
          dropMarker(dir, making);
          throw new Error(`git worktree add failed: ${added.stderr.trim().split('\n')[0]}`);
        }
        markReady(dir, name, making, tip);
        result.made++;
        ready++;
      }
      await gitRaw(root, ['worktree', 'prune']);
      if ((await trunkCommit(p)).commit === tip) break;
    }
    return result;
  } finally {
    rmSync(join(dir, LOCK), { force: true });
  }
}

/** Removes a pooled worktree that holds no changes; one that does is kept and listed as held. */
async function removeIfClean(root: string, path: string, result: { removed: number; held: string[] }): Promise<boolean> {
  if (!existsSync(join(path, '.git'))) {
    // Not a worktree yet (a crash before git wrote its link): nothing in it was ever handed to anyone.
    await removeWorktreeDir(root, path);
    result.removed++;
    return true;
  }
  const status = await gitRaw(path, ['status', '--porcelain', '--untracked-files=all']);
  if (status.code === 0 && status.stdout === '') {
    await removeWorktreeDir(root, path);
    result.removed++;
    return true;
  }
  if (status.code === 0) result.held.push(path);
  else {
    // Not a working tree git knows (a half-made folder): nothing in it was ever handed to anyone.
    await removeWorktreeDir(root, path);
    result.removed++;
    return true;
  }
  return false;
}

async function removeWorktreeDir(root: string, path: string): Promise<void> {
  await gitRaw(root, ['worktree', 'remove', '--force', '--force', path]);
  rmSync(path, { recursive: true, force: true });
  await gitRaw(root, ['worktree', 'prune']);
}


// Module-level on purpose: a memo of a fact on disk (the pool folder's size), keyed by folder and entries.
let duMemo: { key: string; bytes: number } | undefined;

/** The pool's state and disk use, for `/api/resources` and `trellis doctor`. */
export async function poolReport(p: ProjectContext, env: NodeJS.ProcessEnv = process.env): Promise<PoolReport> {
  const dir = poolDir(p, env);
  const entries = readPool(dir);
  const tip = trunkTipFromFiles(p);
  const ready = entries.filter((e) => e.state === 'ready' && e.present);
  // du walks every file: it runs again only when the pool's entries changed.
  const key = `${dir}\0${entries.map((e) => `${e.marker}:${e.commit}`).join(',')}`;
  let bytes = duMemo?.key === key ? duMemo.bytes : -1;
  if (bytes < 0) {
    bytes = entries.length ? await diskUse(dir) : 0;
    duMemo = { key, bytes };
  }
  return {
    dir,
    size: p.settings().sessions.pool,
    ready: ready.length,
    behind: ready.filter((e) => tip !== null && e.commit !== tip).length,
    other: entries.length - ready.length,
    bytes,
  };
}

function diskUse(dir: string): Promise<number> {
  return new Promise((resolve) => {
    childProcess().execFile('du', ['-s', '-B1', dir], (err, stdout) => resolve(err ? 0 : Number(stdout.split(/\s/)[0]) || 0));
  });
}

