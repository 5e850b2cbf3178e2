import { TrellisError } from '../../events/index.js';
import type { SessionChecks, SessionState } from '../../projections/index.js';
import type { Project } from '../project/project.js';
import { currentChecks, type ChecksSources } from './checks.js';

/** What the gate decided: through (`ready`, or `overridden` with the scenarios it let through). */
export type GateDecision = { readonly through: 'ready' | 'gate-off' } | { readonly through: 'overridden'; readonly scenarios: readonly string[] };

/**
 * The merge gate (DESIGN.md §14), run before a merge is dispatched: a session with a `regressed` check or
 * one not measured at its head commit is refused (MERGE_BLOCKED, 409) naming the scenarios and the
 * command that measures them, unless `override` gives a reason; an override is logged on the session
 * (who, why, which scenarios) before the merge goes on. `sessions.mergeGate: "off"` lets every merge through.
 */
export async function gateMerge(
  p: Project,
  state: SessionState,
  override: string | undefined,
  by: string,
  record: (reason: string, scenarios: readonly string[]) => Promise<unknown>,
  sources: ChecksSources = {},
): Promise<GateDecision> {
  if (p.settings().sessions.mergeGate === 'off') return { through: 'gate-off' };
  const checks = await currentChecks(p, state, sources);
  if (checks.ready) return { through: 'ready' };
  if (override === undefined || override.trim() === '') throw blocked(state.id, checks);
  await record(override.trim(), checks.blocking);
  return { through: 'overridden', scenarios: checks.blocking };
}

function blocked(id: string, checks: SessionChecks): TrellisError {
  const why = checks.checks
    .filter((c) => checks.blocking.includes(c.scenario))
    .map((c) => `${c.scenario} (${c.verdict === 'regressed' ? `regressed: passes on trunk, ${c.head!.outcome} at ${checks.head.slice(0, 12)}` : `not measured at ${checks.head.slice(0, 12)}`})`);
  return new TrellisError(
    'MERGE_BLOCKED',
    `merge of ${id} refused by its checks: ${why.join('; ')}. Measure them at the head commit with '${checks.measure}', or override with a reason: trellis session merge ${id} --override "<why>" (POST /api/sessions/${id}/merge {"override": "<why>"})`,
  );
}
