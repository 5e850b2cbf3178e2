import { existsSync } from 'node:fs';
import { isTrellisError, type FixedChecks } from '../../../events/index.js';
import { issueChecks, nodeIdOf, sessionChecks, type SessionChecks, type SessionState } from '../../../projections/index.js';
import { git, gitRaw } from '../../git/run-git.js';
import { showIssue } from '../../issues/verbs.js';
import type { EvalProject } from '../../eval/eval-project.js';
import { scenariosAtCommit } from '../../spec/scenarios-at-commit.js';
import { readSpecTree, type SpecTree } from '../../spec/spec-tree.js';
import { branchRange } from '../worktrees/branch-range.js';
import { mainRoot, trunkCommit } from '../worktrees/worktree.js';

/*
 * A session's checks (DESIGN.md §14): which scenarios concern it, measured in its worktree at its head
 * commit by `trellis session check`, judged against trunk in the review bundle and by the merge gate.
 */

/** The commit the session's branch points at (its base when the branch is gone). */
export async function branchHead(root: string, state: SessionState): Promise<string> {
  const tip = await gitRaw(root, ['rev-parse', '--verify', '--quiet', `refs/heads/${state.branch}^{commit}`]);
  return tip.code === 0 ? tip.stdout.trim() : state.base;
}

/** The files changed from `base` to `head`, with git's status letters. */
export async function changedFiles(root: string, base: string, head: string): Promise<{ status: string; path: string }[]> {
  const names = (await git(root, ['diff', '--name-status', '-z', '--no-renames', base, head])).split('\0');
  const out: { status: string; path: string }[] = [];
  for (let i = 0; i + 1 < names.length; i += 2) out.push({ status: names[i]!, path: names[i + 1]! });
  return out;
}

/** The spec nodes among changed paths. */
export function changedNodes(specRoot: string, paths: readonly string[]): string[] {
  const ids = paths.flatMap((path) => (path.startsWith(`${specRoot}/`) ? [nodeIdOf(path.slice(specRoot.length + 1))] : []));
  return [...new Set(ids.filter((n): n is string => n !== null))].sort();
}

/** The scenarios the session's issue names in its `checks:`; an issue that cannot be read names none, and says why. */
async function issueScenarios(p: EvalProject, issue: string | null): Promise<{ checks: string[]; note?: string }> {
  if (!issue) return { checks: [] };
  try {
    const { checks, problem } = issueChecks((await showIssue(p, issue)).body);
    return problem ? { checks, note: `issue ${issue}: ${problem}` } : { checks };
  } catch (e) {
    if (!isTrellisError(e)) throw e;
    return { checks: [], note: `issue ${issue}'s checks cannot be read: ${e.message}` };
  }
}

export interface ChecksSources {
  /** Trunk's spec tree (the server's memoized one); otherwise read from the main checkout. */
  readonly trunkTree?: () => SpecTree;
  /** Trunk's tip, when the caller has read it already (the review bundle's pre-flight does). */
  readonly trunkTip?: string;
}

/**
 * What a session's checks are fixed to at dispatch (DESIGN.md §14): every scenario its base commit
 * declares (read from git, not from a working tree) and its issue's `checks:` as the issue says now.
 */
export async function checksAtDispatch(p: EvalProject, base: string, issue: string | null): Promise<FixedChecks> {
  const [decls, named] = await Promise.all([scenariosAtCommit(mainRoot(p), base, p.settings().specRoot), issueScenarios(p, issue)]);
  return { base, scenarios: decls.map((d) => ({ id: d.id, node: d.node, run: d.run, timeoutS: d.timeoutS })), issueChecks: named.checks };
}

/** The session's checks at `head`, given the paths its branch changes. */
export async function checksOf(p: EvalProject, state: SessionState, head: string, changed: readonly string[], sources: ChecksSources = {}): Promise<SessionChecks & { notes: string[] }> {
  const settings = p.settings();
  const { specRoot } = settings;
  // The server's memoized tree is trunk's only when it serves the main checkout.
  const trunk = sources.trunkTree && p.root === mainRoot(p) ? sources.trunkTree() : readSpecTree(mainRoot(p), specRoot);
  // A removed worktree declares nothing to compare with: the definitions fixed at dispatch stand.
  const own = existsSync(state.worktree) ? readSpecTree(state.worktree, specRoot) : null;
  const fixed = state.fixedChecks;
  // The issue as it was at spawn; a session from before the rule reads it as it is now.
  const [issue, evals, tip] = await Promise.all([fixed ? { checks: [...fixed.issueChecks] } : issueScenarios(p, state.issue), p.evals.all(), sources.trunkTip ?? trunkCommit(p).then((t) => t.commit)]);
  const checks = sessionChecks({
    session: state.id,
    head,
    linked: state.nodes,
    changed: changedNodes(specRoot, changed),
    issue: issue.checks,
    fixed,
    own: own ? own.nodes.flatMap((n) => n.scenarios) : null,
    trunk: trunk.nodes.flatMap((n) => n.scenarios),
    trunkTip: tip,
    streams: evals.states,
    gate: settings.sessions.mergeGate,
    overrides: state.mergeOverrides,
    acceptances: state.checkAcceptances,
  });
  const notes = [...('note' in issue && issue.note ? [issue.note] : []), ...(fixed ? [] : [`session ${state.id} was spawned before checks were fixed at dispatch: trunk's declarations stand in for its base's`])];
  return { ...checks, notes };
}

/** The session's checks now: at its branch's head, for what the branch changes from its merge base with trunk (branch-range.ts). */
export async function currentChecks(p: EvalProject, state: SessionState, sources: ChecksSources = {}): Promise<SessionChecks & { notes: string[] }> {
  const root = mainRoot(p);
  const [head, tip] = await Promise.all([branchHead(root, state), sources.trunkTip ?? trunkCommit(p).then((t) => t.commit)]);
  const { base } = await branchRange(root, state.base, head, tip);
  const changed = await changedFiles(root, base, head);
  return checksOf(p, state, head, changed.map((f) => f.path), { ...sources, trunkTip: tip });
}
