import type { ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { childProcess } from '../lazy-builtins.js';
import { gitSyncArgs } from './durable.js';

/*
 * Keeps the object store and the refs tidy the way git itself does. Every event leaves three loose
 * objects (blob, tree, commit) and moves a ref; nothing else would ever pack them, and a read of 15,000
 * loose events costs three times a packed one. So after a write, when git's own `gc --auto` estimate
 * says there are too many loose objects, `git gc --auto` runs in the background: it repacks, packs the
 * refs (`pack-refs --all --prune`) and prunes only unreachable objects older than two weeks.
 *
 * Why git's gc and not events written straight into packs (measured, issue 8): a pack per event is a
 * new pack per write (git's own gc.autoPackLimit is 50), and appending to a pack in place is not
 * something git supports; a loose write is ~0.1 ms and a background repack is amortized over ~2,200
 * events. Why it cannot race a writer's compare-and-swap: `pack-refs --prune` deletes a loose ref only
 * under that ref's own `<ref>.lock` and only if it still holds the value it packed (the same lock our
 * CAS takes), and packed-refs is replaced by rename; readers look at the loose ref first, then
 * packed-refs, so a ref is always in one place or the other.
 */

/** git's default `gc.auto`: more loose objects than this (estimated) and `git gc --auto` repacks. */
export const GC_AUTO = 6_700;

/**
 * git's own estimate of the loose objects (builtin/gc.c `too_many_loose_objects`): the objects in the
 * `17/` fan-out folder, times 256. One readdir of a folder of a few dozen names, cheap enough per write.
 */
export function looseObjectEstimate(gitdir: string): number {
  let n = 0;
  try {
    for (const name of readdirSync(join(gitdir, 'objects', '17'))) if (/^[0-9a-f]{38}$/.test(name)) n++;
  } catch {
    return 0;
  }
  return n * 256;
}

/** Loose objects counted exactly (for doctor and tests), and loose refs below `prefix`. */
export function looseCounts(gitdir: string, prefix = 'refs/'): { objects: number; refs: number } {
  let objects = 0;
  for (let i = 0; i < 256; i++) {
    try {
      objects += readdirSync(join(gitdir, 'objects', i.toString(16).padStart(2, '0'))).filter((f) => /^[0-9a-f]{38}$/.test(f)).length;
    } catch {}
  }
  const countRefs = (dir: string): number => {
    try {
      return readdirSync(dir, { withFileTypes: true }).reduce((n, e) => n + (e.isDirectory() ? countRefs(join(dir, e.name)) : e.name.endsWith('.lock') ? 0 : 1), 0);
    } catch {
      return 0;
    }
  };
  return { objects, refs: countRefs(join(gitdir, prefix)) };
}

/**
 * Runs `git gc --auto` for one repository at most once at a time per process. In the background by
 * default: the child is detached and unreferenced, so neither a CLI verb's answer nor its exit waits
 * for it, and a server's event loop never does either. git's own `gc.pid` lock keeps two processes
 * from collecting at once.
 */
export class Housekeeping {
  private running: ChildProcess | undefined;

  /** `threshold`: loose objects (git's estimate) that start a collection; `TRELLIS_GC_AUTO` overrides git's default. */
  constructor(
    readonly gitdir: string,
    private readonly threshold?: number,
  ) {
    this.threshold ??= positiveInt(process.env.TRELLIS_GC_AUTO);
  }

  /** After a write: starts a background `git gc --auto` when git's estimate passes the threshold. */
  afterWrite(): void {
    if (this.running || looseObjectEstimate(this.gitdir) <= (this.threshold ?? GC_AUTO)) return;
    const child = childProcess().spawn('git', this.args(), { detached: true, stdio: 'ignore' });
    this.running = child;
    child.on('error', () => (this.running = undefined));
    child.on('close', () => (this.running = undefined));
    child.unref();
  }

  /** Whether a collection this process started is still running. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  /** Resolves once no collection this process started is running (a server's shutdown, tests). */
  idle(): Promise<void> {
    const child = this.running;
    if (!child) return Promise.resolve();
    // Referenced again while someone waits on it: an unreferenced child alone keeps no process alive.
    child.ref();
    return new Promise((resolve) => child.once('close', () => resolve()));
  }

  /** Runs `git gc --auto` (or, `force`, a full `git gc`) now and resolves with its exit code: doctor's repair and tests. */
  run(opts: { force?: boolean } = {}): Promise<{ code: number; stderr: string }> {
    return new Promise((resolve) => {
      const child = childProcess().spawn('git', this.args(opts.force), { stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', (err) => resolve({ code: 1, stderr: err.message }));
      child.on('close', (code) => resolve({ code: code ?? 1, stderr }));
    });
  }

  private args(force = false): string[] {
    // The repository's own gc.auto decides (gc.auto=0 turns this off, as it does for git) unless a
    // threshold was set explicitly; autoDetach off so the process we started is the one doing the work.
    const auto = force ? [] : this.threshold !== undefined ? ['-c', `gc.auto=${this.threshold}`] : [];
    return ['--git-dir', this.gitdir, ...gitSyncArgs(), '-c', 'gc.autoDetach=false', ...auto, 'gc', ...(force ? [] : ['--auto']), '--quiet'];
  }
}

const positiveInt = (s: string | undefined): number | undefined => {
  const n = s === undefined ? NaN : Number(s);
  return Number.isInteger(n) && n > 0 ? n : undefined;
};
