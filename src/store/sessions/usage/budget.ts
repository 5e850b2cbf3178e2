/**
 * Budgets (issue 42): what a session, or the project's sessions today, may spend on their models, from the
 * main checkout's trellis.json (`sessions.budgetUsd`, `sessions.budgetUsdPerDay`). The signal verb stops a
 * session that reaches one (`awaiting{budget}`); its resume re-checks it.
 */
import { LIVE_STATUSES, type SessionStatus } from '../../../events/index.js';
import { budgetDollars, dollarsAgainst, usageBuckets, type SessionState } from '../../../projections/index.js';
import { loadSettings } from '../../project/config.js';
import type { SessionLogProject as Project } from '../log/sessions-project.js';
import { mainRoot } from '../worktrees/worktree.js';

export interface Budgets {
  readonly budgetUsd: number | null;
  readonly budgetUsdPerDay: number | null;
}

/** The budgets of the main checkout's settings (its trellis.local.json too): a hook runs in the session's worktree, which has neither. */
export function budgetsOf(p: Project): Budgets {
  const main = mainRoot(p);
  const { budgetUsd, budgetUsdPerDay } = (p.root === main ? p.settings() : loadSettings(main)).sessions;
  return { budgetUsd, budgetUsdPerDay };
}

/**
 * Which budget of trellis.json the session has reached, said for its reason, or null: its own cost against
 * `sessions.budgetUsd`, the project's spend today (UTC) against `sessions.budgetUsdPerDay` (every session's
 * stream is read for it, so only when one is set). Also the resume's re-check.
 */
export async function budgetReached(p: Project, state: SessionState, budgets: Budgets = budgetsOf(p)): Promise<string | null> {
  if (!LIVE_STATUSES.has(state.status as SessionStatus)) return null;
  const { budgetUsd, budgetUsdPerDay } = budgets;
  if (budgetUsd !== null) {
    let usd = 0;
    for (const b of usageBuckets(state.usage)) usd += b.usd;
    if (usd >= budgetUsd) return `the session has cost ${dollarsAgainst(usd, budgetUsd)}, its budget is ${budgetDollars(budgetUsd)} (sessions.budgetUsd)`;
  }
  if (budgetUsdPerDay !== null) {
    const today = `${p.now().toISOString().slice(0, 10)}T00`;
    const { states } = await p.sessionLog.all();
    let usd = 0;
    for (const s of states) for (const b of usageBuckets(s.usage, today)) usd += b.usd;
    if (usd >= budgetUsdPerDay) return `the project's sessions have cost ${dollarsAgainst(usd, budgetUsdPerDay)} today, its daily budget is ${budgetDollars(budgetUsdPerDay)} (sessions.budgetUsdPerDay)`;
  }
  return null;
}
