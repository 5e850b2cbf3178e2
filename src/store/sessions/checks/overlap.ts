import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { OverlapIndex, type OverlapWith, type SessionChangeSet, type SessionState } from '../../../projections/index.js';
import { git, gitRaw } from '../../git/run-git.js';
import { readTip } from '../../git/refs.js';
import type { ProjectContext } from '../../project/context.js';
import { adapterOf } from '../agents/index.js';
import { changedNodes } from './checks.js';
import { trunkCommit } from '../worktrees/worktree.js';
import { overlapCandidates } from './overlap-candidates.js';

/*
 * Which live sessions overlap (DESIGN.md §14), kept incrementally: each session's changes are recomputed
 * (three git runs in its worktree) only when a cheap stamp of them moves — trunk's tip, its branch tip and
 * its worktree's index (a commit, a `git add`) — so a commit in one of fifty worktrees costs one session's
 * recompute, not fifty. A session that stops being live leaves the index.
 */

export class OverlapTracker {
  readonly index = new OverlapIndex();
  private readonly stamps = new Map<string, string>();
  /** Trunk's name, read once (a git run): its tip is then a plain file read in every stamp. */
  private trunk: string | null | undefined;
  /** Diagnostics: how many sessions' changes were recomputed (each is git runs). */
  readonly stats = { recomputed: 0 };

  constructor(private readonly p: ProjectContext) {}

  /** Brings the index up to date with `states`: recomputes only the sessions whose stamp moved. */
  async refresh(states: readonly SessionState[]): Promise<OverlapIndex> {
    const live = overlapCandidates(states);
    const ids = new Set(live.map((s) => s.id));
    for (const id of this.index.sessions()) {
      if (!ids.has(id)) {
        this.index.remove(id);
        this.stamps.delete(id);
      }
    }
    if (live.length && this.trunk === undefined) this.trunk = (await trunkCommit(this.p).catch(() => null))?.trunk ?? null;
    // A session's changes are from its merge base with trunk as it is now (branch-range.ts): trunk moving counts.
    const trunkTip = this.trunk ? readTip(this.p.gitdir, `refs/heads/${this.trunk}`) : null;
    await Promise.all(
      live.map(async (s) => {
        const stamp = `${trunkTip ?? ''}|${this.stampOf(s)}`;
        if (this.stamps.get(s.id) === stamp && this.index.has(s.id)) return;
        this.stats.recomputed++;
        const changes = await sessionChanges(this.p, s, trunkTip).catch(() => null);
        // A worktree being made or removed: not remembered, derived again on the next read.
        if (!changes) return;
        this.index.set(changes);
        this.stamps.set(s.id, stamp);
      }),
    );
    return this.index;
  }

  /** Branch tip and the worktree's index file: both move on a commit or a staged edit. Plain file reads. */
  private stampOf(s: SessionState): string {
    const tip = readTip(this.p.gitdir, `refs/heads/${s.branch}`) ?? '';
    let index = '';
    try {
      const dotgit = readFileSync(join(s.worktree, '.git'), 'utf8').trim().replace(/^gitdir:\s*/, '');
      const dir = isAbsolute(dotgit) ? dotgit : join(s.worktree, dotgit);
      const st = statSync(join(dir, 'index'));
      index = `${st.mtimeMs}:${st.size}`;
    } catch {
      // No index yet: the tip alone.
    }
    return `${tip}|${index}`;
  }

  overlapsOf(id: string): OverlapWith[] {
    return this.index.overlapsOf(id);
  }
}

/**
 * What a session changes, in its worktree: committed, staged, unstaged and new files since its merge base
 * with trunk's tip (its spawn commit without one), so what it brought in from trunk is not its change; its
 * adapter's own files excepted.
 */
export async function sessionChanges(p: ProjectContext, s: SessionState, trunkTip: string | null = null): Promise<SessionChangeSet> {
  const owned = new Set(adapterOf(s.harness).ownedPaths);
  const fork = trunkTip ? await gitRaw(s.worktree, ['merge-base', 'HEAD', trunkTip]) : null;
  const base = fork?.code === 0 && fork.stdout.trim() ? fork.stdout.trim() : s.base;
  const [tracked, untracked] = await Promise.all([
    git(s.worktree, ['diff', '--name-only', '-z', '--no-renames', base]),
    git(s.worktree, ['ls-files', '--others', '--exclude-standard', '-z']),
  ]);
  const paths = [...new Set([...tracked.split('\0'), ...untracked.split('\0')].filter((x) => x && !owned.has(x)))].sort();
  return { session: s.id, paths, nodes: changedNodes(p.settings().specRoot, paths) };
}

// One tracker per open project: a server keeps its index warm across requests.
const trackers = new WeakMap<ProjectContext, OverlapTracker>();

export function overlapTracker(p: ProjectContext): OverlapTracker {
  let t = trackers.get(p);
  if (!t) trackers.set(p, (t = new OverlapTracker(p)));
  return t;
}
