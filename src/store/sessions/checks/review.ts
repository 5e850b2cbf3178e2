import { usageView, type Issue } from '../../../projections/index.js';
import { branchHead, changedFiles, changedNodes, checksOf, type ChecksSources } from './checks.js';
import { gitRaw, git } from '../../git/run-git.js';
import { mergedIssues } from '../../issues/merged-list.js';
import type { SessionsProject } from '../log/sessions-project.js';
import { sessionState } from '../log/session-append.js';
import { mainRoot, trunkCommit } from '../worktrees/worktree.js';
import { shq } from '../agents/adapter.js';
import { adapterOf } from '../agents/index.js';
import { branchRange } from '../worktrees/branch-range.js';
import type { BringTrunkIn, Preflight, ReviewBundle } from '../../../projections/review-bundle.js';
import { mergeByHand } from '../../../projections/merge-by-hand.js';

export type { BringTrunkIn, Preflight, ReviewBundle, ReviewCommit, ReviewFile, ReviewNode } from '../../../projections/review-bundle.js';

/**
 * Builds the review bundle: the session's branch as `trunk...head` (branch-range.ts: its own commits, its
 * diff from the merge base with trunk as it is now), changed spec nodes with their open issues, and a
 * pre-flight of the merge into trunk by `git merge-tree --write-tree` (which touches no worktree and no
 * index), with the one next action a conflict has: bring trunk in.
 */
export async function reviewBundle(p: SessionsProject, id: string, sources: ChecksSources = {}): Promise<ReviewBundle> {
  const state = await sessionState(p, id);
  const root = mainRoot(p);
  // Independent reads side by side: each is a git process or a fold, and a loaded machine spawns slowly.
  const [head, tip] = await Promise.all([branchHead(root, state), trunkCommit(p)]);
  const range = await branchRange(root, state.base, head, tip.commit);
  const { base } = range;
  const [log, changed] = await Promise.all([git(root, ['log', '--reverse', '--topo-order', '--format=%H%x00%an%x00%aI%x00%s', `${range.since}..${head}`]), changedFiles(root, base, head)]);
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
  const [files, { issues }, checks, conflicts] = await Promise.all([
    Promise.all(changed.map(async (f) => ({ ...f, diff: await git(root, ['diff', '--no-color', '--no-ext-diff', base, head, '--', f.path]) }))),
    nodeIds.length ? mergedIssues(p) : { issues: [] as Issue[] },
    checksOf(p, state, head, paths, { ...sources, trunkTip: tip.commit }),
    range.merged ? [] : mergeConflicts(root, tip.commit, head),
  ]);
  const nodes = nodeIds.map((n) => ({
    id: n,
    openIssues: issues.filter((i) => i.status === 'open' && i.nodes.includes(n)).map((i) => ({ id: i.id, concern: i.concern })),
  }));
  const preflight: Preflight = {
    trunk: tip.trunk,
    trunkHead: tip.commit,
    result: conflicts.length ? 'conflicts' : 'clean',
    conflicts,
    trunkMovedAhead: range.trunkMovedAhead,
    ready: checks.ready,
    checks: checks.line,
    merged: range.merged,
    bringTrunkIn: conflicts.length ? bringTrunkIn(state.harness, tip.trunk, conflicts) : null,
    mergeByHand: range.merged || adapterOf(state.harness).readsProse ? null : mergeByHand(root, tip.trunk, state.branch),
  };
  return { session: id, branch: state.branch, base, head, commits, files, nodes, preflight, checks, cost: usageView(state.harness, state.usage) };
}

/** The paths that conflict when head is merged into trunk's tip (none: it merges cleanly). */
async function mergeConflicts(root: string, trunkHead: string, head: string): Promise<string[]> {
  const merged = await gitRaw(root, ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', trunkHead, head]);
  if (merged.code !== 0 && merged.code !== 1) throw new Error(`git merge-tree failed: ${merged.stderr.trim()}`);
  // Output: the tree, then (on conflict) the conflicted paths, NUL-separated.
  return merged.code === 1 ? [...new Set(merged.stdout.split('\0').slice(1).filter(Boolean))] : [];
}

/**
 * A conflict's one next action: trunk brought into the session's branch, in its worktree. An agent that
 * reads prose is asked to (a prompt); a shell is given the exact command for its terminal, whose working
 * directory is the worktree.
 */
export function bringTrunkIn(harness: string, trunk: string, conflicts: readonly string[]): BringTrunkIn {
  // Quoted only when the shell needs it: the command is read and typed by a person.
  const name = /^[\w./-]+$/.test(trunk) ? trunk : shq(trunk);
  // `--no-edit`: a merge that needs no resolution would otherwise open an editor in the pane.
  if (!adapterOf(harness).readsProse) return { command: `git merge --no-edit ${name}` };
  return {
    prompt: `Bring the latest ${trunk} into your branch: run git merge ${name} in your worktree, resolve the conflicts in ${conflicts.join(', ')} keeping both sides' intent, run the tests, and commit the merge. Do not move ${trunk} and do not edit the main checkout.`,
  };
}
