import { existsSync } from 'node:fs';
import { TrellisError, type Reading } from '../../../events/index.js';
import type { SessionChecks, SessionState } from '../../../projections/index.js';
import { runDefinitions } from '../../eval/verbs.js';
import { git } from '../../git/run-git.js';
import type { SessionsProject } from '../log/sessions-project.js';
import { adapterOf } from '../agents/index.js';
import { currentChecks } from './checks.js';
import { trellisHome } from '../../trellis-home.js';
import { sandboxArgv } from '../confine/confine.js';
import { measureTrunkTip } from './trunk-baseline.js';
import { mainRoot } from '../worktrees/worktree.js';
import { sessionState } from '../log/session-append.js';

export interface CheckResult {
  readonly session: string;
  readonly head: string;
  /** The readings filed in the session's worktree, one per definition run (a changed check runs both). */
  readonly readings: readonly Reading[];
  /** Trunk's readings at its tip, filed because trunk's latest was older or missing. */
  readonly trunk: readonly Reading[];
  /** Checks that could not run, and why. */
  readonly skipped: readonly { readonly scenario: string; readonly why: string }[];
  /** The verdicts after the run. */
  readonly checks: SessionChecks & { notes: string[] };
}

/**
 * `trellis session check <id>`: runs the session's checks in its worktree at its head commit, each as
 * defined at dispatch (a check the branch redefined runs both ways, so the page can show both), then
 * measures trunk at its tip where trunk's latest reading is older (the baseline, DESIGN.md §14), and
 * files the readings. A worktree with uncommitted changes is refused: a reading names the commit it
 * measured, and that commit would not be what ran.
 */
export async function checkSession(p: SessionsProject, id: string, by: string): Promise<CheckResult> {
  const state = await sessionState(p, id);
  if (!existsSync(state.worktree)) {
    throw new TrellisError('SESSION_REFUSED', `session ${id} has no worktree any more (${state.worktree}): its checks cannot run; its readings so far stay in its review`);
  }
  const dirty = await uncommitted(state);
  if (dirty.length) {
    throw new TrellisError(
      'SESSION_REFUSED',
      `session ${id}'s worktree has uncommitted changes (${dirty.slice(0, 5).join(', ')}${dirty.length > 5 ? `, and ${dirty.length - 5} more` : ''}): the checks measure its head commit, so commit them first (git -C ${state.worktree} commit -am ...)`,
      { details: { uncommitted: dirty } },
    );
  }
  const before = await currentChecks(p, state);
  const runs: { id: string; run: string; timeoutS: number }[] = [];
  const plan = (scenario: string, run: string | null, timeoutS: number | null) => {
    if (run !== null && !runs.some((r) => r.id === scenario && r.run === run)) runs.push({ id: scenario, run, timeoutS: timeoutS ?? 600 });
  };
  for (const c of before.checks) {
    plan(c.scenario, c.run, c.timeoutS);
    if (c.changed) plan(c.scenario, c.changed.now.run, c.changed.now.timeoutS);
  }
  const skipped = before.checks.filter((c) => c.run === null && !c.changed?.now.run).map((c) => ({ scenario: c.scenario, why: 'declared by no spec node, here or on trunk' }));
  const stale = before.checks.filter((c) => c.baseline === 'stale' || c.baseline === 'missing').map((c) => c.scenario);
  // The worktree's code is the agent's (a check's `npm test` runs its package.json): a confined
  // session's checks run in its sandbox too, or measuring it would run that code with a person's rights.
  const sandbox = state.confinement?.confined
    ? { sandbox: sandboxArgv(process.env, { worktree: state.worktree, mainRoot: mainRoot(p), trellisHome: trellisHome(process.env), home: process.env.HOME, branch: state.branch }) }
    : {};
  // Two worktrees, two runs side by side: the session's head and trunk's tip do not share a file.
  const [readings, trunk] = await Promise.all([
    runDefinitions(p, { scope: id, worktree: state.worktree, commit: before.head, ...sandbox }, runs, by),
    before.trunkTip ? measureTrunkTip(p, before.trunkTip, stale, by) : [],
  ]);
  return { session: id, head: before.head, readings, trunk, skipped, checks: await currentChecks(p, state) };
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
