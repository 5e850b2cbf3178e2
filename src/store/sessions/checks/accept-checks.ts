import type { CheckDefinition } from '../../../events/index.js';
import { sessionView, type SessionView } from '../../../projections/index.js';
import type { SessionsProject } from '../log/sessions-project.js';
import { acceptChangedChecks, type AcceptInput } from './merge-gate.js';
import { sessionState } from '../log/session-append.js';

/**
 * `trellis session accept <id>` / POST /api/sessions/:id/accept: a person accepts the new definitions of
 * checks the session's branch changed (DESIGN.md §14), with a reason, logged on the session; the
 * session itself never can (SELF_APPROVAL).
 */
export async function acceptChecks(p: SessionsProject, id: string, input: AcceptInput): Promise<{ session: string; accepted: readonly CheckDefinition[]; view: SessionView }> {
  const state = await sessionState(p, id);
  const { accepted } = await acceptChangedChecks(p, state, input, (reason, scenarios) =>
    p.sessionLog.write(id, { type: 'accept-check', reason, scenarios, by: input.by, at: p.now().toISOString(), source: 'user' }),
  );
  return { session: id, accepted, view: sessionView(await sessionState(p, id)) };
}
