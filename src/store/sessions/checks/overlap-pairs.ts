import type { OverlapWith, SessionState } from '../../../projections/index.js';
import type { ProjectContext } from '../../project/context.js';
import { overlapCandidates } from './overlap-candidates.js';

/**
 * Each session's overlaps with the others, for a reader that shows them (session ls and show, the board).
 * With fewer than two candidates none can overlap: no git runs (before, a CLI read with one session ran
 * five: the trunk's name and commit, then its merge base, diff and untracked files), and the tracker, with
 * the adapters and the checks it uses, is not loaded (issue 40: start-up of board and session ls).
 */
export async function overlapsBetween(p: ProjectContext, states: readonly SessionState[]): Promise<(id: string) => OverlapWith[]> {
  if (overlapCandidates(states).length < 2) return () => [];
  const { overlapTracker } = await import('./overlap.js');
  const index = await overlapTracker(p).refresh(states);
  return (id) => index.overlapsOf(id);
}
