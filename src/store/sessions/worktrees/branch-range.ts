import { git, gitRaw } from '../../git/run-git.js';

/**
 * What a session's branch changes, one definition for every surface (the README's "the review is
 * trunk...head"): its commits are those on the branch and not on trunk (`trunk..head`), its diff is
 * against the merge base of head and trunk as it is now (`git diff trunk...head`), and trunk has moved
 * ahead when trunk has commits the branch lacks (`head..trunk`). After trunk is merged into the branch,
 * trunk's commits and lines are no longer the branch's: the merge base moved to trunk's tip.
 *
 * Once the branch is in trunk, "trunk as it is now" holds it, so the range is read against trunk as it
 * was just before: the merge commit's first parent, or (trunk fast-forwarded to the branch) the trunk
 * commit the branch last brought in, else the spawn commit.
 */
export interface BranchRange {
  /** The diff's base: the merge base with trunk (as it is now, or just before the branch's merge). */
  readonly base: string;
  /** The trunk side of the commits' range: `since..head`. */
  readonly since: string;
  /** Trunk has commits the branch lacks. */
  readonly trunkMovedAhead: boolean;
  /** The trunk commit that brought the branch in (its merge commit, or its tip after a fast-forward). */
  readonly merged: { readonly commit: string } | null;
}

export async function branchRange(root: string, spawnBase: string, head: string, trunkHead: string): Promise<BranchRange> {
  // A branch without commits is not "merged" (its tip is its base, which trunk always contains).
  const merged = head !== spawnBase ? await mergedAt(root, head, trunkHead) : null;
  const since = merged ? await trunkBefore(root, merged.commit, spawnBase, head) : trunkHead;
  const [base, ahead] = await Promise.all([mergeBase(root, since, head), merged ? '0' : git(root, ['rev-list', '--count', `${head}..${trunkHead}`])]);
  return { base: base ?? spawnBase, since: base ? since : spawnBase, trunkMovedAhead: Number(ahead.trim()) > 0, merged };
}

async function mergeBase(root: string, a: string, b: string): Promise<string | null> {
  const r = await gitRaw(root, ['merge-base', a, b]);
  return r.code === 0 ? r.stdout.trim() || null : null;
}

/** Trunk just before the branch came in: see BranchRange. */
async function trunkBefore(root: string, mergeCommit: string, spawnBase: string, head: string): Promise<string> {
  if (mergeCommit !== head) {
    const parent = await gitRaw(root, ['rev-parse', '--verify', '--quiet', `${mergeCommit}^1`]);
    if (parent.code === 0) return parent.stdout.trim();
  }
  // A fast-forward: the newest merge on the branch's own line brought trunk in as its second parent.
  const lastMerge = (await git(root, ['rev-list', '--first-parent', '--merges', '-n', '1', `${spawnBase}..${head}`])).trim();
  if (lastMerge) {
    const brought = await gitRaw(root, ['rev-parse', '--verify', '--quiet', `${lastMerge}^2`]);
    if (brought.code === 0) return brought.stdout.trim();
  }
  return spawnBase;
}

/**
 * Whether the branch's tip is already in trunk, and where: the first trunk commit descending from it (a
 * `--no-ff` merge's merge commit), or the tip itself when trunk fast-forwarded to it.
 */
export async function mergedAt(root: string, head: string, trunkHead: string): Promise<{ commit: string } | null> {
  if ((await gitRaw(root, ['merge-base', '--is-ancestor', head, trunkHead])).code !== 0) return null;
  const path = (await git(root, ['rev-list', '--ancestry-path', '--topo-order', '--reverse', `${head}..${trunkHead}`])).split('\n').filter(Boolean);
  return { commit: path[0] ?? head };
}
