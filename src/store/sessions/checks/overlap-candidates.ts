import { existsSync } from 'node:fs';
import { LIVE_STATUSES, type SessionStatus } from '../../../events/index.js';
import type { SessionState } from '../../../projections/index.js';

/** Sessions whose changes can overlap: an agent is (or is about to be) at work in the worktree, or it waits for review. */
export const OVERLAPPING: ReadonlySet<SessionStatus> = new Set([...LIVE_STATUSES, 'queued', 'interrupted']);

/** The sessions whose changes are compared: overlapping, forked, and with their worktree on disk. */
export const overlapCandidates = (states: readonly SessionState[]): SessionState[] =>
  states.filter((s) => OVERLAPPING.has(s.status as SessionStatus) && s.base && existsSync(s.worktree));
