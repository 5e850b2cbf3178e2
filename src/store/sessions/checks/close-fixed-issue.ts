import { TrellisError } from '../../../events/index.js';
import type { Issue } from '../../../projections/index.js';
import { closeIssue } from '../../issues/verbs.js';
import { existing } from '../../issues/known-issue.js';
import { isLocalId } from '../../project/ids.js';
import type { SessionsProject } from '../log/sessions-project.js';
import { branchHead } from './checks.js';
import { mergedAt } from '../worktrees/branch-range.js';
import { sessionState } from '../log/session-append.js';
import { mainRoot, trunkCommit } from '../worktrees/worktree.js';

/**
 * Closes the issue a session was spawned for, because the session's change is in trunk (a forge's
 * "fixes #n", but asked for, never done behind a person's back): the issue's timeline then names the
 * session. Refused, saying why, when the session names another issue or none, or its branch is not
 * (or not yet) in trunk — the claim "its change is merged" is checked here, never taken from the caller.
 */
export async function closeIssueFixedBy(p: SessionsProject, issue: string, session: string, by: string): Promise<Issue> {
  const state = await sessionState(p, session);
  if (state.issue !== issue) {
    // An issue that does not exist is named as such first (with the nearest ids), not as a mismatch.
    if (isLocalId(issue)) await existing(p, issue);
    throw new TrellisError('INVALID_INPUT', state.issue ? `session ${session} was spawned for issue ${state.issue}, not ${issue}` : `session ${session} was spawned for no issue; close ${issue} without naming a session`);
  }
  const root = mainRoot(p);
  const [head, tip] = await Promise.all([branchHead(root, state), trunkCommit(p)]);
  const merged = head !== state.base ? await mergedAt(root, head, tip.commit) : null;
  if (!merged) throw new TrellisError('SESSION_REFUSED', `session ${session}'s branch ${state.branch} is not in ${tip.trunk}: merge it first, or close the issue without naming the session`);
  return closeIssue(p, issue, by, { session });
}

/** `issue close` (CLI and POST /api/issues/:id/close): naming a session records that its merged change closed the issue. */
export function closeIssueVerb(p: SessionsProject, id: string, by: string, session?: string): Promise<Issue> {
  return session ? closeIssueFixedBy(p, id, session, by) : closeIssue(p, id, by);
}
