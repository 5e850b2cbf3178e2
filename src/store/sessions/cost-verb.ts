import { costReport, parseSince, type CostGroup, type CostReport } from '../../projections/cost-report.js';
import type { SessionsProject as Project } from './sessions-project.js';

/** `trellis cost` and GET /api/cost: what the sessions' model use cost, grouped (issue 42). One function for both. */
export async function costVerb(p: Project, opts: { by?: string; since?: string }): Promise<CostReport> {
  const since = parseSince(opts.since, p.now());
  const { states } = await p.sessionLog.all();
  return costReport(states, (opts.by ?? 'session') as CostGroup, since);
}
