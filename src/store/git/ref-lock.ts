/**
 * Writing a ref the way git does: under `<ref>.lock`, created exclusively, with the bytes fsynced before
 * the rename, so Trellis and `git update-ref` never tear each other's writes. Reading refs is refs.ts.
 */
import { closeSync, fsyncSync, futimesSync, linkSync, mkdirSync, openSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { TrellisError } from '../../events/index.js';
import { isCode, namingPath } from '../fs-errors.js';
import { syncDir } from './durable.js';
import { readTip } from './refs.js';

export interface LockOptions {
  /** How long to wait for a live writer to release the lock. */
  readonly waitMs: number;
  /** A lock older than this is a crashed writer's leftover: refuse at once rather than wait. */
  readonly staleMs: number;
  /**
   * Break a lock older than `staleMs` and take it, instead of refusing. Only for a lock that guards no
   * file's bytes (a ref lock's leftover may be a half-written tip a person should look at): its holder
   * keeps it young while it lives (`withLock`), so an old one is a crashed holder's.
   */
  readonly takeStale?: boolean;
}

export const defaultLockOptions = (env: NodeJS.ProcessEnv = process.env): LockOptions => ({
  waitMs: positiveInt(env.TRELLIS_LOCK_WAIT_MS) ?? 5_000,
  staleMs: positiveInt(env.TRELLIS_LOCK_STALE_MS) ?? 10_000,
});

/**
 * Moves `ref` from `expected` (null: must not exist) to `next`, under git's own lock convention: create
 * `<ref>.lock` exclusively, re-read the tip, compare, write, fsync, rename. Interoperates with
 * `git update-ref`. Returns false when the tip moved (the caller re-reads, re-decides and retries).
 */
export async function compareAndSwapRef(gitdir: string, ref: string, expected: string | null, next: string, opts: LockOptions): Promise<boolean> {
  const refPath = join(gitdir, ref);
  const lockPath = `${refPath}.lock`;
  const fd = await acquireLock(lockPath, opts);
  return replaceUnderLock(fd, lockPath, refPath, () => (readTip(gitdir, ref) === expected ? `${next}\n` : null));
}

/**
 * Moves `ref` to what `build(tip)` returns, holding `<ref>.lock` from before the tip is read until the
 * new tip is renamed in, so no other writer can move the ref in between: the writer cannot lose. For a
 * writer that keeps losing compare-and-swap races (see StreamStore.write); everyone else stays
 * optimistic. `build` returning null leaves the ref as it is. The lock is released whatever happens.
 */
export async function replaceRefUnderLock(gitdir: string, ref: string, opts: LockOptions, build: (tip: string | null) => Promise<string | null>): Promise<string | null> {
  const refPath = join(gitdir, ref);
  const lockPath = `${refPath}.lock`;
  const fd = await acquireLock(lockPath, opts);
  // A live holder keeps its lock young while `build` runs (a promote waits on its forge there), so a
  // waiting writer never takes it for a crashed writer's leftover.
  const stopBeat = keepYoung(fd, opts);
  let next: string | null;
  try {
    next = await build(readTip(gitdir, ref));
  } catch (err) {
    releaseLock(fd, lockPath);
    throw err;
  } finally {
    stopBeat();
  }
  replaceUnderLock(fd, lockPath, refPath, () => (next === null ? null : `${next}\n`));
  return next;
}

/**
 * Runs `fn` holding `lockPath` (created exclusively, kept young by a heartbeat while `fn` runs, removed
 * after it settles): a mutual exclusion across processes on one machine for work that writes no file of
 * its own, such as the session queue's pass (store/sessions/verbs/queue.ts).
 */
export async function withLock<T>(lockPath: string, opts: LockOptions, fn: () => Promise<T>): Promise<T> {
  const fd = await acquireLock(lockPath, opts);
  const stopBeat = keepYoung(fd, opts);
  try {
    return await fn();
  } finally {
    stopBeat();
    try {
      releaseLock(fd, lockPath);
    } catch {} // already broken as stale by a waiter: nothing of ours is left to remove
  }
}

/** The holder's heartbeat: the lock's mtime kept fresh (every third of `staleMs`) until the returned stop. */
function keepYoung(fd: number, opts: LockOptions): () => void {
  const touch = () => {
    try {
      const now = new Date();
      futimesSync(fd, now, now);
    } catch {}
  };
  const beat = setInterval(touch, Math.max(1, Math.floor(opts.staleMs / 3)));
  beat.unref();
  return () => clearInterval(beat);
}

function releaseLock(fd: number, lockPath: string): void {
  try {
    closeSync(fd);
  } catch {}
  unlinkSync(lockPath);
}

/**
 * The end of every write under a git lock file (`<file>.lock`, already created exclusively as `fd`):
 * `content()` decides under the lock what `target` becomes (null: leave it, the answer is false); the
 * bytes are fsynced before the rename, so a crash leaves the old file or the new one, never a torn or
 * empty one. The lock is released whatever happens.
 */
export function replaceUnderLock(fd: number, lockPath: string, target: string, content: () => string | Uint8Array | null): boolean {
  let locked = true;
  try {
    const bytes = content();
    if (bytes === null) return false;
    try {
      writeFileSync(fd, bytes); // all of it: one writeSync may write less than asked
      fsyncSync(fd);
    } catch (err) {
      throw namingPath(err, lockPath);
    }
    closeSync(fd);
    renameSync(lockPath, target);
    locked = false;
    // The rename itself reaches the disk too: after a power cut the ref is the old one or the new one.
    syncDir(dirname(target));
    return true;
  } finally {
    if (locked) releaseLock(fd, lockPath);
  }
}

async function acquireLock(lockPath: string, opts: LockOptions): Promise<number> {
  const deadline = Date.now() + opts.waitMs;
  let pause = 1;
  for (;;) {
    try {
      return openSync(lockPath, 'wx');
    } catch (err) {
      if (isCode(err, 'ENOENT')) {
        mkdirSync(dirname(lockPath), { recursive: true });
        continue;
      }
      if (!isCode(err, 'EEXIST')) throw err;
    }
    const age = lockAge(lockPath);
    if (age === undefined) continue; // released between our open and our stat
    if (age > opts.staleMs && opts.takeStale) {
      breakStale(lockPath, opts.staleMs);
      continue;
    }
    if (age > opts.staleMs || Date.now() >= deadline) throw lockedError(lockPath, age);
    // Back off with jitter so contending writers do not retry in lockstep.
    await sleep(pause + Math.random() * pause);
    pause = Math.min(pause * 2, 25);
  }
}

/**
 * Removes a crashed holder's lock. It is renamed aside first (only one of several breakers gets it) and
 * looked at again there: if it turns out young, another breaker had already replaced the stale lock with
 * its own live one between our stat and our rename, so it is linked back (link, unlike rename, never
 * overwrites a lock made meanwhile).
 */
function breakStale(lockPath: string, staleMs: number): void {
  const aside = `${lockPath}.stale-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    renameSync(lockPath, aside);
  } catch (err) {
    if (isCode(err, 'ENOENT')) return; // another breaker, or the holder, got there first
    throw err;
  }
  const age = lockAge(aside);
  if (age !== undefined && age <= staleMs) {
    try {
      linkSync(aside, lockPath);
    } catch (err) {
      if (!isCode(err, 'EEXIST')) throw err;
    }
  }
  try {
    unlinkSync(aside);
  } catch {}
}

function lockAge(path: string): number | undefined {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch (err) {
    if (isCode(err, 'ENOENT')) return undefined;
    throw err;
  }
}

function lockedError(lockPath: string, ageMs: number): TrellisError {
  return new TrellisError(
    'REF_LOCKED',
    `${lockPath} exists (${Math.round(ageMs / 1000)}s old): another writer holds it, or one crashed mid-write. ` +
      `If no trellis or git process is writing to this repository, remove it: rm '${lockPath}'`,
  );
}

const positiveInt = (s: string | undefined): number | undefined => {
  const n = s === undefined ? NaN : Number(s);
  return Number.isInteger(n) && n > 0 ? n : undefined;
};
