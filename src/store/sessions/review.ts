import type { Issue } from '../../projections/index.js';
import { branchHead, changedFiles, changedNodes, checksOf, type ChecksSources } from './checks.js';
import { gitRaw, git } from '../git/run-git.js';
import { mergedIssues } from '../issues/merged-list.js';
import type { SessionsProject } from './sessions-project.js';
import { sessionState } from './verbs.js';
import { mainRoot, trunkCommit } from './worktree.js';
import type { Preflight, ReviewBundle, ReviewCommit, ReviewFile, ReviewNode } from '../../projections/review-bundle.js';

export type { Preflight, ReviewBundle, ReviewCommit, ReviewFile, ReviewNode } from '../../projections/review-bundle.js';

/**
 * Builds the review bundle: base and head of the session's branch, its commits, changed files with
 * their diffs, changed spec nodes with their open issues, and a pre-flight of the merge into trunk by
 * `git merge-tree --write-tree` (which touches no worktree and no index).
 */
export async function reviewBundle(p: SessionsProject, id: string, sources: ChecksSources = {}): Promise<ReviewBundle> {
  const state = await sessionState(p, id);
  const root = mainRoot(p);
  const head = await branchHead(root, state);
  const base = state.base;
  // Independent reads side by side: each is a git process or a fold, and a loaded machine spawns slowly.
  const [log, changed, tip] = await Promise.all([git(root, ['log', '--reverse', '--format=%H%x00%an%x00%aI%x00%s', `${base}..${head}`]), changedFiles(root, base, head), trunkCommit(p)]);
  const commits = log
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [hash, author, at, subject] = l.split('\0');
      return { hash: hash!, author: author!, at: at!, subject: subject! };
    });
  const paths = changed.map((f) => f.path);
  const nodeIds = changedNodes(p.settings().specRoot, paths);
  // Trunk's tip read once: the pre-flight merges into it and the checks' baseline is measured there.
  const [files, { issues }, checks, pre] = await Promise.all([
    Promise.all(changed.map(async (f) => ({ ...f, diff: await git(root, ['diff', '--no-color', '--no-ext-diff', base, head, '--', f.path]) }))),
    nodeIds.length ? mergedIssues(p) : { issues: [] as Issue[] },
    checksOf(p, state, head, paths, { ...sources, trunkTip: tip.commit }),
    preflight(root, tip, base, head, commits.length > 0),
  ]);
  const nodes = nodeIds.map((n) => ({
    id: n,
    openIssues: issues.filter((i) => i.status === 'open' && i.nodes.includes(n)).map((i) => ({ id: i.id, concern: i.concern })),
  }));
  return { session: id, branch: state.branch, base, head, commits, files, nodes, preflight: { ...pre, ready: checks.ready, checks: checks.line }, checks };
}

async function preflight(root: string, { trunk, commit: trunkHead }: { trunk: string; commit: string }, base: string, head: string, hasCommits: boolean): Promise<Omit<Preflight, 'ready' | 'checks'>> {
  const merged = await gitRaw(root, ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', trunkHead, head]);
  if (merged.code !== 0 && merged.code !== 1) throw new Error(`git merge-tree failed: ${merged.stderr.trim()}`);
  // Output: the tree, then (on conflict) the conflicted paths, NUL-separated.
  const conflicts = merged.code === 1 ? [...new Set(merged.stdout.split('\0').slice(1).filter(Boolean))] : [];
  const ahead = (await gitRaw(root, ['rev-list', '--count', `${base}..${trunkHead}`])).stdout.trim();
  return { trunk, trunkHead, result: merged.code === 0 ? 'clean' : 'conflicts', conflicts, trunkMovedAhead: Number(ahead) > 0, merged: hasCommits ? await mergedAt(root, head, trunkHead) : null };
}

/**
 * Whether the branch's tip is already in trunk, and where: the first trunk commit descending from it (a
 * `--no-ff` merge's merge commit), or the tip itself when trunk fast-forwarded to it. A branch without
 * commits is not "merged" (its tip is its base, which trunk always contains).
 */
export async function mergedAt(root: string, head: string, trunkHead: string): Promise<{ commit: string } | null> {
  if ((await gitRaw(root, ['merge-base', '--is-ancestor', head, trunkHead])).code !== 0) return null;
  const path = (await git(root, ['rev-list', '--ancestry-path', '--topo-order', '--reverse', `${head}..${trunkHead}`])).split('\n').filter(Boolean);
  return { commit: path[0] ?? head };
}
