import { isTrellisError } from '../../events/index.js';
import type { IssueEvent, IssueTimeline } from '../../projections/issue.js';
import { threadTimeline } from '../../projections/thread.js';
import { parseForgeId } from '../forge/driver.js';
import type { IssuesProject as Project } from './issues-project.js';
import { requireLocalId } from '../project/ids.js';
import { showIssue } from './verbs.js';

/**
 * `trellis issue timeline <id>` and GET /api/issues/:id/timeline: who opened, edited, closed, reopened or
 * promoted an issue, and when, oldest first. Not a field of the Issue (spec §2.1 is its whole shape): a
 * read of its own, of one shape for every store. A local thread's comes from its events; a forge issue's
 * from the forge's own timeline (GitHub's issue events, GitLab's resource state events, Forgejo's
 * timeline), `opened` being the issue's own author and creation. A forge that cannot be read still
 * answers `opened`, with a note saying why the rest is missing.
 */
export async function issueTimeline(p: Project, id: string): Promise<IssueTimeline> {
  // The same read `issue show` makes: unknown ids and eval-remark threads are not found.
  const issue = await showIssue(p, id);
  const forge = parseForgeId(id);
  if (!forge) return threadTimeline(await p.threads.get(requireLocalId(id)));
  const opened: IssueEvent = { type: 'opened', by: issue.by, at: issue.created };
  try {
    const { events, notes } = await p.forges.driver(forge.store)!.timeline(forge.number);
    return { id, events: [opened, ...events], carried: {}, notes };
  } catch (err) {
    if (!isTrellisError(err)) throw err;
    return { id, events: [opened], carried: {}, notes: [`${err.message}; the timeline shows the opening only`] };
  }
}
