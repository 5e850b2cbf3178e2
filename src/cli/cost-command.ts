import { costLines } from '../projections/cost-report.js';
import { costVerb } from '../store/sessions/usage/cost-verb.js';
import { openProject } from './open-project.js';
import { out } from './output.js';
import { checkShape, type VerbContext } from './shape.js';

export const COST_USAGE = 'trellis cost [--by session|issue|node|day] [--since <date|7d|12h|today|week>] [--json]';

/** `trellis cost`: the sessions' tokens and money from the agents' own records, grouped (the same verb as GET /api/cost). */
export async function runCost(ctx: VerbContext): Promise<number> {
  checkShape({ args: [], options: ['by', 'since', 'json'], usage: COST_USAGE }, ctx);
  const report = await costVerb(openProject(ctx.cwd), {
    ...(typeof ctx.options.by === 'string' ? { by: ctx.options.by } : {}),
    ...(typeof ctx.options.since === 'string' ? { since: ctx.options.since } : {}),
  });
  await out(ctx.options.json ? `${JSON.stringify(report, null, 2)}\n` : costLines(report));
  return 0;
}
