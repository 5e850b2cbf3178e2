import { nodeIdOf, type Issue } from '../../projections/index.js';
import { gitRaw, git } from '../git/run-git.js';
import { mergedIssues } from '../issues/verbs.js';
import type { Project } from '../project.js';
import { sessionState } from './verbs.js';
import { mainRoot, trunkCommit } from './worktree.js';
import type { Preflight, ReviewBundle, ReviewCommit, ReviewFile, ReviewNode } from '../../projections/review-bundle.js';

export type { Preflight, ReviewBundle, ReviewCommit, ReviewFile, ReviewNode } from '../../projections/review-bundle.js';

/**
 * Builds the review bundle: base and head of the session's branch, its commits, changed files with
 * their diffs, changed spec nodes with their open issues, and a pre-flight of the merge into trunk by
 * `git merge-tree --write-tree` (which touches no worktree and no index).
 */
export async function reviewBundle(p: Project, id: string): Promise<ReviewBundle> {
  const state = await sessionState(p, id);
  const root = mainRoot(p);
  const tip = await gitRaw(root, ['rev-parse', '--verify', '--quiet', `refs/heads/${state.branch}^{commit}`]);
  const head = tip.code === 0 ? tip.stdout.trim() : state.base;
  const base = state.base;
  const log = await git(root, ['log', '--reverse', '--format=%H%x00%an%x00%aI%x00%s', `${base}..${head}`]);
  const commits = log
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [hash, author, at, subject] = l.split('\0');
      return { hash: hash!, author: author!, at: at!, subject: subject! };
    });
  const names = (await git(root, ['diff', '--name-status', '-z', '--no-renames', base, head])).split('\0');
  const changed: { status: string; path: string }[] = [];
  for (let i = 0; i + 1 < names.length; i += 2) changed.push({ status: names[i]!, path: names[i + 1]! });
  const files = await Promise.all(changed.map(async (f) => ({ ...f, diff: await git(root, ['diff', '--no-color', '--no-ext-diff', base, head, '--', f.path]) })));
  const specRoot = p.settings().specRoot;
  const nodeIds = [...new Set(changed.flatMap((f) => (f.path.startsWith(`${specRoot}/`) ? [nodeIdOf(f.path.slice(specRoot.length + 1))] : [])).filter((n): n is string => n !== null))].sort();
  const { issues } = nodeIds.length ? await mergedIssues(p) : { issues: [] as Issue[] };
  const nodes = nodeIds.map((n) => ({
    id: n,
    openIssues: issues.filter((i) => i.status === 'open' && i.nodes.includes(n)).map((i) => ({ id: i.id, concern: i.concern })),
  }));
  return { session: id, branch: state.branch, base, head, commits, files, nodes, preflight: await preflight(p, root, base, head) };
}

async function preflight(p: Project, root: string, base: string, head: string): Promise<Preflight> {
  const { trunk, commit: trunkHead } = await trunkCommit(p);
  const merged = await gitRaw(root, ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', trunkHead, head]);
  if (merged.code !== 0 && merged.code !== 1) throw new Error(`git merge-tree failed: ${merged.stderr.trim()}`);
  // Output: the tree, then (on conflict) the conflicted paths, NUL-separated.
  const conflicts = merged.code === 1 ? [...new Set(merged.stdout.split('\0').slice(1).filter(Boolean))] : [];
  const ahead = (await gitRaw(root, ['rev-list', '--count', `${base}..${trunkHead}`])).stdout.trim();
  return { trunk, trunkHead, result: merged.code === 0 ? 'clean' : 'conflicts', conflicts, trunkMovedAhead: Number(ahead) > 0 };
}
