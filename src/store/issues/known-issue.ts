/**
 * An issue by id for the issue verbs (issue 44): an id no issue has is refused naming the nearest ids that
 * are issues (`no issue <id>; did you mean …?`), by the one rule of project/ids.ts that sessions share.
 */
import { isTrellisError, type ThreadCommand } from '../../events/index.js';
import { issueThreads } from '../../projections/issue-list.js';
import type { Issue } from '../../projections/issue.js';
import { threadIssue } from '../../projections/thread.js';
import { requireLocalId, unknownId } from '../project/ids.js';
import type { IssuesProject as Project } from './issues-project.js';

/** A local issue by id; an id no issue has is refused naming the nearest ids that are issues. */
export async function existing(p: Project, id: string): Promise<Issue> {
  const state = await p.threads.get(requireLocalId(id));
  if (issueThreads([state]).length === 0) throw await unknownIssue(p, id);
  return threadIssue(state);
}

/** Appends to a local thread; a thread that is not there is refused as `existing` refuses it. */
export async function writeThread(p: Project, id: string, command: ThreadCommand): ReturnType<Project['threads']['write']> {
  try {
    return await p.threads.write(requireLocalId(id), command);
  } catch (err) {
    if (!isTrellisError(err) || err.code !== 'THREAD_NOT_FOUND') throw err;
    // A damaged ref is damage, not an unknown id: the read names it and its repair (it throws).
    await p.threads.get(requireLocalId(id));
    throw await unknownIssue(p, id);
  }
}

const unknownIssue = (p: Project, id: string) => unknownId('THREAD_NOT_FOUND', 'issue', id, async () => issueThreads((await p.threads.all()).states).map((t) => t.id));
