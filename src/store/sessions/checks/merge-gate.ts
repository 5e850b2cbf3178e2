import { TrellisError, type CheckDefinition } from '../../../events/index.js';
import type { SessionChecks, SessionState } from '../../../projections/index.js';
import type { EvalProject } from '../../eval/eval-project.js';
import { currentChecks, type ChecksSources } from './checks.js';

/** What the gate decided: through (`ready`, or `overridden` with the scenarios it let through). */
export type GateDecision = { readonly through: 'ready' | 'gate-off' } | { readonly through: 'overridden'; readonly scenarios: readonly string[] };

/**
 * Who makes a gate decision: the author named, and the session the request comes from, if any (the
 * CLI's `$TRELLIS_SESSION`, set in every session's terminal; a request's `Trellis-Session` header).
 */
export interface Decider {
  readonly by: string;
  readonly fromSession?: string | undefined;
}

/**
 * No self-approval (DESIGN.md §14): a session never lets its own work through, whatever name it signs
 * with. Refused (SELF_APPROVAL, 403) before anything is logged.
 */
export function refuseSelfApproval(session: string, who: Decider, what: string): void {
  const self = who.fromSession?.trim() === session ? `from inside session ${session} (TRELLIS_SESSION=${session})` : who.by.trim() === session ? `as session ${session}` : null;
  if (self === null) return;
  throw new TrellisError(
    'SELF_APPROVAL',
    `${what} refused: it was asked ${self}, and a session never approves its own work. A person decides: run it from a terminal outside the session (or the review page), under their own name`,
  );
}

/**
 * The merge gate (DESIGN.md §14), run before a merge is dispatched: a session whose checks block it
 * (regressed, unmeasured at its head or on trunk's tip, changed since dispatch, or required and not
 * passing) is refused (MERGE_BLOCKED, 409) naming the scenarios and the command that measures them,
 * unless a person's `override` gives a reason; an override is logged on the session (who, why, which
 * scenarios) before the merge goes on. `sessions.mergeGate: "off"` lets every merge through.
 */
export async function gateMerge(
  p: EvalProject,
  state: SessionState,
  override: string | undefined,
  who: Decider,
  record: (reason: string, scenarios: readonly string[]) => Promise<unknown>,
  sources: ChecksSources = {},
): Promise<GateDecision> {
  if (p.settings().sessions.mergeGate === 'off') return { through: 'gate-off' };
  const checks = await currentChecks(p, state, sources);
  if (checks.ready) return { through: 'ready' };
  if (override === undefined || override.trim() === '') throw blocked(state.id, checks);
  refuseSelfApproval(state.id, who, `the override of ${state.id}'s merge gate`);
  await record(override.trim(), checks.blocking);
  return { through: 'overridden', scenarios: checks.blocking };
}

function blocked(id: string, checks: SessionChecks): TrellisError {
  const why = checks.checks.filter((c) => c.blocks !== null).map((c) => `${c.scenario} (${c.blocks})`);
  const changed = checks.checks.some((c) => c.blocks !== null && c.verdict === 'changed');
  return new TrellisError(
    'MERGE_BLOCKED',
    `merge of ${id} refused by its checks: ${why.join('; ')}. Measure them at the head commit (and trunk at its tip) with '${checks.measure}'${changed ? `, let a person accept a changed check: trellis session accept ${id} --reason "<why>" (POST /api/sessions/${id}/accept {"reason": "<why>"})` : ''}, or override with a reason: trellis session merge ${id} --override "<why>" (POST /api/sessions/${id}/merge {"override": "<why>"})`,
    // The facts beside the message, so a page can say them in its own words and point at its own buttons.
    { details: { blocking: checks.checks.filter((c) => c.blocks !== null).map((c) => ({ scenario: c.scenario, blocks: c.blocks })), changed } },
  );
}

export interface AcceptInput extends Decider {
  readonly reason: string;
  /** The changed checks to accept; none named: every changed check not yet accepted. */
  readonly scenarios?: readonly string[];
}

/**
 * A person accepts the new definitions of checks the session's branch changed or removed (DESIGN.md
 * §14): logged on the session (who, why, the definitions accepted); from then on the gate runs the
 * accepted definition. A definition changed again after that is `changed` again.
 */
export async function acceptChangedChecks(
  p: EvalProject,
  state: SessionState,
  input: AcceptInput,
  record: (reason: string, definitions: readonly CheckDefinition[]) => Promise<unknown>,
): Promise<{ readonly accepted: readonly CheckDefinition[] }> {
  if (input.reason.trim() === '') throw new TrellisError('INVALID_INPUT', "accepting a changed check needs a reason (--reason \"<why the new definition is right>\")");
  const checks = await currentChecks(p, state);
  const open = checks.checks.filter((c) => c.verdict === 'changed' && c.changed && !c.changed.accepted);
  const named = input.scenarios?.length ? input.scenarios : open.map((c) => c.scenario);
  const notChanged = named.filter((s) => !open.some((c) => c.scenario === s));
  if (notChanged.length) {
    throw new TrellisError('INVALID_INPUT', `not a changed check of ${state.id} waiting for acceptance: ${notChanged.join(', ')} (waiting: ${open.map((c) => c.scenario).join(', ') || 'none'})`);
  }
  if (named.length === 0) throw new TrellisError('SESSION_REFUSED', `session ${state.id} has no changed check to accept: its checks run as fixed at dispatch`);
  refuseSelfApproval(state.id, input, `accepting ${state.id}'s changed checks`);
  const definitions = open.filter((c) => named.includes(c.scenario)).map((c) => c.changed!.now);
  await record(input.reason.trim(), definitions);
  return { accepted: definitions };
}
