import { mkdirSync, openSync, readFileSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { syncDir } from './durable.js';
import { replaceUnderLock } from './ref-lock.js';
import { describeDamage, findDamagedRefs } from './refs.js';
import { isCode } from '../fs-errors.js';
import { gitRaw } from './run-git.js';

/** Where `trellis doctor --repair` moves a damaged ref it cannot restore (inside the git dir, never lost). */
export const DAMAGED_REFS_DIR = join('trellis', 'damaged-refs');

export interface DamagedRef {
  /** The full ref name, `refs/trellis/issues/<id>`. */
  readonly ref: string;
  readonly path: string;
  /** `zero-length`, or what the file holds. */
  readonly damage: string;
}

export type RefRepair =
  | { readonly ref: string; readonly outcome: 'restored'; readonly oid: string; readonly from: 'reflog' | 'projection cache' }
  | { readonly ref: string; readonly outcome: 'moved aside'; readonly to: string }
  | { readonly ref: string; readonly outcome: 'left'; readonly reason: string };

/** Every damaged loose ref below `prefix` (default: all of Trellis's). */
export function damagedRefs(gitdir: string, prefix = 'refs/trellis/'): DamagedRef[] {
  return findDamagedRefs(gitdir, prefix).map((e) => ({ ref: e.path.slice(gitdir.length + 1), path: e.path, damage: describeDamage(e.content) }));
}

/**
 * Repairs one damaged ref: back to the newest commit its reflog names, else to the tip the projection
 * cache last saw for its stream (`cachedTip`), each only if that commit exists; otherwise the file is
 * moved aside to `<gitdir>/trellis/damaged-refs/` (named in the answer), so git and Trellis read on.
 * Done under the ref's own lock, and only while the file still holds the damage found.
 */
export async function repairDamagedRef(gitdir: string, damaged: DamagedRef, cachedTip: (ref: string) => string | undefined): Promise<RefRepair> {
  const fromReflog = await newestExistingCommit(gitdir, reflogCandidates(gitdir, damaged.ref));
  const fromCache = fromReflog ? undefined : await newestExistingCommit(gitdir, [cachedTip(damaged.ref)].filter((o): o is string => !!o));
  const lockPath = `${damaged.path}.lock`;
  let fd: number;
  try {
    fd = openSync(lockPath, 'wx');
  } catch (err) {
    if (isCode(err, 'EEXIST')) return { ref: damaged.ref, outcome: 'left', reason: `${lockPath} exists: a writer holds it, or one crashed; remove it if no trellis or git process is running, then repair again` };
    throw err;
  }
  const stillDamaged = () => {
    try {
      return describeDamage(readFileSync(damaged.path, 'latin1')) === damaged.damage;
    } catch {
      return false;
    }
  };
  const oid = fromReflog ?? fromCache;
  if (oid) {
    const done = replaceUnderLock(fd, lockPath, damaged.path, () => (stillDamaged() ? `${oid}\n` : null));
    return done ? { ref: damaged.ref, outcome: 'restored', oid, from: fromReflog ? 'reflog' : 'projection cache' } : { ref: damaged.ref, outcome: 'left', reason: 'it changed while being repaired; run doctor again' };
  }
  const to = join(gitdir, DAMAGED_REFS_DIR, `${damaged.ref.replace(/^refs\//, '')}.${Date.now()}`);
  // The lock is held (empty) while the file moves; replaceUnderLock then drops it without a rename.
  let moved = false;
  replaceUnderLock(fd, lockPath, damaged.path, () => {
    if (stillDamaged()) {
      mkdirSync(dirname(to), { recursive: true });
      renameSync(damaged.path, to);
      syncDir(dirname(damaged.path));
      moved = true;
    }
    return null;
  });
  return moved ? { ref: damaged.ref, outcome: 'moved aside', to } : { ref: damaged.ref, outcome: 'left', reason: 'it changed while being repaired; run doctor again' };
}

/** The new values of a ref's reflog, newest first (git keeps `logs/<ref>`; Trellis's own writes keep none). */
function reflogCandidates(gitdir: string, ref: string): string[] {
  let text: string;
  try {
    text = readFileSync(join(gitdir, 'logs', ref), 'latin1');
  } catch {
    return [];
  }
  return text
    .split('\n')
    .map((line) => /^[0-9a-f]{40} ([0-9a-f]{40}) /.exec(line)?.[1])
    .filter((oid): oid is string => !!oid && !/^0{40}$/.test(oid))
    .reverse();
}

async function newestExistingCommit(gitdir: string, oids: readonly string[]): Promise<string | undefined> {
  for (const oid of oids) {
    const r = await gitRaw(gitdir, ['--git-dir', gitdir, 'cat-file', '-e', `${oid}^{commit}`]);
    if (r.code === 0) return oid;
  }
  return undefined;
}
