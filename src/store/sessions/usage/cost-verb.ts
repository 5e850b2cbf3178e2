import { costReport, parseSince, projectSpend, type CostGroup, type CostReport, type ProjectSpend } from '../../../projections/index.js';
import { budgetsOf } from './budget.js';
import type { SessionsProject as Project } from '../log/sessions-project.js';

/**
 * `trellis cost` and GET /api/cost: what the sessions' model use cost, grouped (issue 42), and beside the
 * rows the project's spend today and this week with its daily budget (the page's and the host's figures,
 * the spawn form's). One function for both.
 */
export async function costVerb(p: Project, opts: { by?: string; since?: string }): Promise<CostReport & { readonly spend: ProjectSpend }> {
  const now = p.now();
  const since = parseSince(opts.since, now);
  const { states } = await p.sessionLog.all();
  return { ...costReport(states, (opts.by ?? 'session') as CostGroup, since), spend: projectSpend(states, now, budgetsOf(p).budgetUsdPerDay) };
}
