import type { SessionStatus } from '../events/index.js';
import type { SessionState } from './session.js';

/**
 * The quarantine rule (spec §4.2 rule 2), its one home: a session whose agent failed this many turns in a
 * row while it should be alive in its pane is held aside, never auto-resumed. The serve's supervisors, the
 * detached reaction a hook starts, and the opencode watch each ask `quarantineDue` and act on its answer.
 */
export const QUARANTINE_AFTER = 3;

/** Statuses in which a session's agent should be alive in its pane: what the supervisors watch, and where failed turns quarantine. */
export const SUPERVISED_STATUSES: ReadonlySet<SessionStatus> = new Set<SessionStatus>(['running', 'awaiting', 'review', 'merging']);

/** Whether a session's status is one its agent should be alive in (see SUPERVISED_STATUSES). */
export const supervised = (status: SessionState['status']): boolean => status !== 'absent' && SUPERVISED_STATUSES.has(status);

/**
 * Why the session must be quarantined now (the reason its `quarantined` event records), or null when it
 * must not: fewer than QUARANTINE_AFTER failed turns in a row, or a status with no live agent (queued,
 * starting, interrupted, already quarantined, failed, closed — a resume of a quarantine starts the count over).
 */
export function quarantineDue(s: Pick<SessionState, 'status' | 'turnFailures'>): string | null {
  if (!supervised(s.status) || s.turnFailures < QUARANTINE_AFTER) return null;
  return `${s.turnFailures} turn failures in a row`;
}
