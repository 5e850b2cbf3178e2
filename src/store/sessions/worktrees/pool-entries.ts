import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isCode } from '../../fs-errors.js';
import type { ProjectContext } from '../../project/context.js';
import { worktreePath } from './worktree.js';

/*
 * The warm worktree pool (DESIGN.md §15). Per project, `sessions.pool` worktrees checked out on a detached
 * HEAD at trunk's tip wait under `<worktrees>/<slot>/.pool/`; a spawn claims one (moves it to the
 * session's path, switches it to `trellis/<id>` at the session's base: only the difference is checked
 * out) instead of checking out the whole tree. A pooled worktree holds no branch; what state it is in is
 * told by a marker file beside it, and every change of state is one rename, so two processes never take
 * one worktree and a crash leaves nothing half-made that can be claimed:
 *
 *   <name>.making.<pid>   being made or refreshed by process <pid> (never claimed; a dead pid's is rubble)
 *   <name>.ready          checked out, clean, at the commit the marker holds: claimable
 *   <name>.claimed.<pid>  being taken by a spawn in process <pid>
 *   (no marker)           handed back or left by a crash: removed only if git says it holds no changes
 */

/** The pool's folder: beside the sessions' worktrees. */
export function poolDir(p: ProjectContext, env: NodeJS.ProcessEnv = process.env): string {
  return join(dirname(worktreePath(p, 'x', env)), '.pool');
}

type EntryState = 'making' | 'ready' | 'claimed' | 'loose';

export interface PoolEntry {
  readonly name: string;
  readonly path: string;
  readonly state: EntryState;
  /** The marker's file name (none for a loose worktree). */
  readonly marker: string | null;
  readonly pid: number | null;
  /** The commit a ready worktree is checked out at. */
  readonly commit: string | null;
  /** Whether the worktree's folder is there. */
  readonly present: boolean;
}

const MARKER = /^(wt-[0-9a-f]{12})\.(making|ready|claimed)(?:\.(\d+))?$/;
const ENTRY = /^wt-[0-9a-f]{12}$/;

/** Every entry of the pool, from its folder's listing (one readdir; a ready marker's commit read). */
export function readPool(dir: string): PoolEntry[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const folders = new Set(names.filter((n) => ENTRY.test(n)));
  const entries = new Map<string, PoolEntry>();
  for (const n of names) {
    const m = MARKER.exec(n);
    if (!m) continue;
    const [, name, state, pid] = m as unknown as [string, string, EntryState, string | undefined];
    let commit: string | null = null;
    if (state === 'ready') {
      try {
        commit = readFileSync(join(dir, n), 'utf8').trim() || null;
      } catch {
        continue; // claimed between the listing and the read
      }
    }
    entries.set(name, { name, path: join(dir, name), state, marker: n, pid: pid ? Number(pid) : null, commit, present: folders.has(name) });
  }
  for (const name of folders) {
    if (!entries.has(name)) entries.set(name, { name, path: join(dir, name), state: 'loose', marker: null, pid: null, commit: null, present: true });
  }
  return [...entries.values()].sort((a, b) => (a.name < b.name ? -1 : 1));
}

/** Whether process `pid` is running (a zombie, dead but not yet reaped, is not). */
export const alive = (pid: number | null): boolean => {
  if (pid === null) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return isCode(err, 'EPERM');
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return true;
  }
};

/** Renames a marker; false when somebody else renamed it first (the one atomic step every hand-over is). */
export function take(dir: string, from: string, to: string): boolean {
  try {
    renameSync(join(dir, from), join(dir, to));
    return true;
  } catch (err) {
    if (isCode(err, 'ENOENT')) return false;
    throw err;
  }
}

export const dropMarker = (dir: string, marker: string) => rmSync(join(dir, marker), { force: true });

/** `making` → `ready`, with the commit in the marker (written first, then renamed: never a half marker). */
export function markReady(dir: string, name: string, making: string, commit: string): void {
  writeFileSync(join(dir, making), `${commit}\n`);
  renameSync(join(dir, making), join(dir, `${name}.ready`));
}
