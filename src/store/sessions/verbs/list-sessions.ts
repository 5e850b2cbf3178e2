import { sessionList, type OverlapWith, type SessionSummary } from '../../../projections/index.js';
import type { StreamProblem } from '../../streams/projection-cache.js';
import type { SessionsProject } from '../log/sessions-project.js';
import { overlapsBetween } from '../checks/overlap-pairs.js';

/*
 * `session ls` (and GET /api/sessions) reads the session log and the overlaps alone: kept apart from the
 * verbs that launch, deliver and close (verbs.ts), so listing loads neither tmux nor the agents' adapters.
 */

/** A session in the list, with the live sessions whose changes touch a node or a file it changes too. */
export type ListedSession = SessionSummary & { readonly overlaps: readonly OverlapWith[] };

export interface SessionListing {
  readonly sessions: readonly ListedSession[];
  readonly problems: readonly StreamProblem[];
}

/** Every session, most recently active first; closed ones only with `all`. */
export async function listSessions(p: SessionsProject, opts: { all?: boolean } = {}): Promise<SessionListing> {
  const { states, problems } = await p.sessionLog.all();
  const list = sessionList(states);
  const overlapsOf = await overlapsBetween(p, states);
  const shown = opts.all ? list : list.filter((s) => s.state !== 'closed');
  return { sessions: shown.map((s) => ({ ...s, overlaps: overlapsOf(s.id) })), problems };
}
