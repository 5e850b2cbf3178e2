import type { SessionView } from './types';

/** The states in which an agent is at work: its hook events move between them and read no bundle again. */
const AT_WORK = new Set(['starting', 'running', 'awaiting']);

/**
 * What the session's read says that its review bundle reads: where its branch started, the merge overrides,
 * the acceptances of changed checks (made on the page, from the CLI or the API: the checks table then runs
 * the accepted definition), and its phase: at work (starting, running, awaiting), or a state of its own (put
 * up for review, merging, closed and its worktree gone, interrupted...), each read afresh. The bundle is read
 * again when this changes (useReviewBundle's `version`).
 */
export const reviewVersion = (s: Pick<SessionView, 'state' | 'base' | 'branch' | 'mergeOverrides' | 'checkAcceptances'>): string =>
  JSON.stringify([AT_WORK.has(s.state) ? 'at work' : s.state, s.base, s.branch, s.mergeOverrides.length, s.checkAcceptances.length]);
