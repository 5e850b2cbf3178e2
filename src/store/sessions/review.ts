import type { Issue } from '../../projections/index.js';
import { branchHead, changedFiles, changedNodes, checksOf, type ChecksSources } from './checks.js';
import { gitRaw, git } from '../git/run-git.js';
import { mergedIssues } from '../issues/merged-list.js';
import type { Project } from '../project/project.js';
import { sessionState } from './verbs.js';
import { mainRoot, trunkCommit } from './worktree.js';
import type { Preflight, ReviewBundle, ReviewCommit, ReviewFile, ReviewNode } from '../../projections/review-bundle.js';

export type { Preflight, ReviewBundle, ReviewCommit, ReviewFile, ReviewNode } from '../../projections/review-bundle.js';

/**
 * Builds the review bundle: base and head of the session's branch, its commits, changed files with
 * their diffs, changed spec nodes with their open issues, and a pre-flight of the merge into trunk by
 * `git merge-tree --write-tree` (which touches no worktree and no index).
 */
export async function reviewBundle(p: Project, id: string, sources: ChecksSources = {}): Promise<ReviewBundle> {
  const state = await sessionState(p, id);
  const root = mainRoot(p);
  const head = await branchHead(root, state);
  const base = state.base;
  const log = await git(root, ['log', '--reverse', '--format=%H%x00%an%x00%aI%x00%s', `${base}..${head}`]);
  const commits = log
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [hash, author, at, subject] = l.split('\0');
      return { hash: hash!, author: author!, at: at!, subject: subject! };
    });
  const changed = await changedFiles(root, base, head);
  const files = await Promise.all(changed.map(async (f) => ({ ...f, diff: await git(root, ['diff', '--no-color', '--no-ext-diff', base, head, '--', f.path]) })));
  const nodeIds = changedNodes(p.settings().specRoot, changed.map((f) => f.path));
  const { issues } = nodeIds.length ? await mergedIssues(p) : { issues: [] as Issue[] };
  const nodes = nodeIds.map((n) => ({
    id: n,
    openIssues: issues.filter((i) => i.status === 'open' && i.nodes.includes(n)).map((i) => ({ id: i.id, concern: i.concern })),
  }));
  const checks = await checksOf(p, state, head, changed.map((f) => f.path), sources);
  return { session: id, branch: state.branch, base, head, commits, files, nodes, preflight: { ...(await preflight(p, root, base, head)), ready: checks.ready, checks: checks.line }, checks };
}

async function preflight(p: Project, root: string, base: string, head: string): Promise<Omit<Preflight, 'ready' | 'checks'>> {
  const { trunk, commit: trunkHead } = await trunkCommit(p);
  const merged = await gitRaw(root, ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', trunkHead, head]);
  if (merged.code !== 0 && merged.code !== 1) throw new Error(`git merge-tree failed: ${merged.stderr.trim()}`);
  // Output: the tree, then (on conflict) the conflicted paths, NUL-separated.
  const conflicts = merged.code === 1 ? [...new Set(merged.stdout.split('\0').slice(1).filter(Boolean))] : [];
  const ahead = (await gitRaw(root, ['rev-list', '--count', `${base}..${trunkHead}`])).stdout.trim();
  return { trunk, trunkHead, result: merged.code === 0 ? 'clean' : 'conflicts', conflicts, trunkMovedAhead: Number(ahead) > 0 };
}
