import { TrellisError } from '../../events/index.js';
import type { Reply, ThreadState } from '../../projections/index.js';
import { isEvidenceHash } from '../evidence/evidence.js';
import { isLocalId } from '../project/ids.js';
import type { IssuesProject } from '../issues/issues-project.js';
import { replyPrompt } from '../issues/reply-prompt.js';

/** An eval-remark thread as the eval surfaces show it (never as an Issue). */
export interface RemarkThread {
  readonly id: string;
  readonly scenario: string;
  readonly reading: string | null;
  readonly concern: string;
  readonly body: string;
  readonly by: string;
  /** Who a reply loops in: the reading's filer, else the thread's author (spec §4.6.4). */
  readonly originator: string;
  readonly status: ThreadState['status'];
  readonly created: string;
  readonly replies: readonly Reply[];
}

export const originatorOf = (t: ThreadState): string => t.scope?.originator ?? t.by;

function remarkThread(t: ThreadState): RemarkThread {
  return {
    id: t.id,
    scenario: t.scope!.scenario,
    reading: t.scope!.reading ?? null,
    concern: t.concern,
    body: t.body,
    by: t.by,
    originator: originatorOf(t),
    status: t.status,
    created: t.created,
    replies: t.replies,
  };
}

/** An eval-remark thread by id; any other id (an issue's included) is THREAD_NOT_FOUND here. */
export async function showRemark(p: IssuesProject, id: string): Promise<RemarkThread> {
  const state = isLocalId(id) ? await p.threads.get(id) : undefined;
  if (!state || state.status === 'absent' || !state.scope) throw new TrellisError('THREAD_NOT_FOUND', `no eval remark thread ${JSON.stringify(id)}`);
  return remarkThread(state);
}

/**
 * Replies on an eval-remark thread and loops in its originator, the reading's filer, when that is a
 * session that is online (silent otherwise; never spawns one). Issue verbs never see these threads.
 */
export async function replyToRemark(p: IssuesProject, id: string, input: { body: string; evidence?: readonly string[]; by: string }): Promise<{ thread: RemarkThread; reply: number; loopedIn: string | null }> {
  await showRemark(p, id);
  const body = input.body.trim() === '' ? null : input.body;
  if (body === null) throw new TrellisError('INVALID_INPUT', 'body must be non-empty text');
  const by = input.by.trim();
  if (!by) throw new TrellisError('INVALID_INPUT', 'author (--by) must be non-empty text');
  const evidence = [...new Set(input.evidence ?? [])];
  const bad = evidence.find((h) => !isEvidenceHash(h));
  if (bad !== undefined) throw new TrellisError('INVALID_INPUT', `'${bad}' is not an evidence hash (64 lowercase hex digits of sha256)`);
  p.evidence.require(evidence);
  const { state } = await p.threads.write(id, { type: 'reply', body, evidence, by, at: p.now().toISOString() });
  const originator = originatorOf(state);
  let loopedIn: string | null = null;
  if (originator !== by && (await p.sessions.isOnline(originator))) {
    await p.sessions.notify(originator, replyPrompt({ thread: state.id, what: `eval remark "${state.concern}" about ${state.scope!.scenario}`, by, body }));
    loopedIn = originator;
  }
  return { thread: remarkThread(state), reply: state.replies.length, loopedIn };
}
