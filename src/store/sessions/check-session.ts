import { existsSync } from 'node:fs';
import { TrellisError, type Reading } from '../../events/index.js';
import type { SessionChecks, SessionState } from '../../projections/index.js';
import { runScenarios } from '../eval/verbs.js';
import { git } from '../git/run-git.js';
import type { Project } from '../project/project.js';
import { readSpecTree } from '../spec/spec-tree.js';
import { adapterOf } from './adapters/index.js';
import { currentChecks } from './checks.js';
import { sessionState } from './verbs.js';

export interface CheckResult {
  readonly session: string;
  readonly head: string;
  /** The readings filed, one per scenario run. */
  readonly readings: readonly Reading[];
  /** Checks that could not run in the session's worktree, and why. */
  readonly skipped: readonly { readonly scenario: string; readonly why: string }[];
  /** The verdicts after the run. */
  readonly checks: SessionChecks & { notes: string[] };
}

/**
 * `trellis session check <id>`: runs the session's checks in its worktree at its head commit (`eval run
 * --scope <id>`: each bounded by its timeout, its output kept as evidence) and files the readings. A
 * worktree with uncommitted changes is refused: a reading names the commit it measured, and that
 * commit would not be what ran.
 */
export async function checkSession(p: Project, id: string, by: string): Promise<CheckResult> {
  const state = await sessionState(p, id);
  if (!existsSync(state.worktree)) {
    throw new TrellisError('SESSION_REFUSED', `session ${id} has no worktree any more (${state.worktree}): its checks cannot run; its readings so far stay in its review`);
  }
  const dirty = await uncommitted(state);
  if (dirty.length) {
    throw new TrellisError(
      'SESSION_REFUSED',
      `session ${id}'s worktree has uncommitted changes (${dirty.slice(0, 5).join(', ')}${dirty.length > 5 ? `, and ${dirty.length - 5} more` : ''}): the checks measure its head commit, so commit them first (git -C ${state.worktree} commit -am ...)`,
    );
  }
  const before = await currentChecks(p, state);
  const runnable = before.checks.filter((c) => c.node !== null && c.run !== null);
  const ownTree = readSpecTree(state.worktree, p.settings().specRoot);
  const declaredHere = new Set(ownTree.nodes.flatMap((n) => n.scenarios.map((s) => s.id)));
  const run = runnable.filter((c) => declaredHere.has(c.scenario)).map((c) => c.scenario);
  const skipped = before.checks
    .filter((c) => !run.includes(c.scenario))
    .map((c) => ({ scenario: c.scenario, why: c.node === null ? 'declared by no spec node, here or on trunk' : "not declared in the session's own spec tree (its branch removed it)" }));
  const readings = run.length ? await runScenarios(p, { scenarios: run, scope: id, by }) : [];
  return { session: id, head: before.head, readings, skipped, checks: await currentChecks(p, state) };
}

/** Paths with uncommitted changes in the session's worktree (untracked ones too), the adapter's own files excepted. */
async function uncommitted(state: SessionState): Promise<string[]> {
  const owned = new Set(adapterOf(state.harness).ownedPaths);
  const out = await git(state.worktree, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames']);
  return out
    .split('\0')
    .filter((e) => e.length > 3)
    .map((e) => e.slice(3))
    .filter((path) => !owned.has(path));
}

