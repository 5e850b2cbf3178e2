import { existsSync } from 'node:fs';
import { LIVE_STATUSES, type SessionStatus } from '../../../events/index.js';
import type { OverlapWith, SessionState } from '../../../projections/index.js';
import type { ProjectContext } from '../../project/context.js';

/** Sessions whose changes can overlap: an agent is (or is about to be) at work in the worktree, or it waits for review. */
export const OVERLAPPING: ReadonlySet<SessionStatus> = new Set([...LIVE_STATUSES, 'queued', 'interrupted']);

/** The sessions whose changes are compared: overlapping, forked, and with their worktree on disk. */
export const overlapCandidates = (states: readonly SessionState[]): SessionState[] =>
  states.filter((s) => OVERLAPPING.has(s.status as SessionStatus) && s.base && existsSync(s.worktree));

/**
 * Each session's overlaps with the others, for a reader that shows them (session ls and show, the board).
 * With fewer than two candidates none can overlap: no git runs (five per session before: the trunk's name
 * and tip, a merge base, a diff and the untracked files), and the tracker, with the adapters and the
 * checks it uses, is not loaded (issue 40: start-up of board and session ls).
 */
export async function overlapsBetween(p: ProjectContext, states: readonly SessionState[]): Promise<(id: string) => OverlapWith[]> {
  if (overlapCandidates(states).length < 2) return () => [];
  const { overlapTracker } = await import('./overlap.js');
  const index = await overlapTracker(p).refresh(states);
  return (id) => index.overlapsOf(id);
}
