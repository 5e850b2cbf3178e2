import { cpus, freemem } from 'node:os';
import { isTrellisError, LIVE_STATUSES } from '../../events/index.js';
import type { SessionState } from '../../projections/index.js';
import type { SessionsProject as Project } from './sessions-project.js';
import { launch, record, type SessionRuntime } from './runtime.js';

/** The budget and what uses it: what `/api/resources` reports and the queue decides on. */
export interface SessionBudget {
  readonly running: number;
  readonly queued: number;
  /** Running sessions at most (`sessions.max`, default the number of cores). */
  readonly budget: number;
  readonly minFreeMb: number;
}

export function budgetOf(p: Project, states: readonly SessionState[]): SessionBudget {
  const { max, minFreeMb } = p.settings().sessions;
  return {
    running: states.filter((s) => LIVE_STATUSES.has(s.status as never)).length,
    queued: states.filter((s) => s.status === 'queued').length,
    budget: max ?? cpus().length,
    minFreeMb,
  };
}

/**
 * One pass of the queue (DESIGN.md §9): launches queued sessions, oldest first, while running sessions
 * stay under the budget and the host keeps `sessions.minFreeMb` free. `queued → starting` is a
 * compare-and-swap append, so two processes passing at once never launch one session twice. Passes of
 * the project in one process run one at a time (its SessionWork), so they never count the same free slot
 * twice; two processes passing at once still can (the CAS guards each session, not the budget).
 * Returns the ids launched (or that failed to launch).
 */
export function queuePass(p: Project, rt: SessionRuntime): Promise<string[]> {
  return p.sessionWork.queuePass(() => passOnce(p, rt));
}

async function passOnce(p: Project, rt: SessionRuntime): Promise<string[]> {
  const { states } = await p.sessionLog.all();
  const budget = budgetOf(p, states);
  let running = budget.running;
  const queued = states.filter((s) => s.status === 'queued').sort((a, b) => (a.created === b.created ? (a.id < b.id ? -1 : 1) : a.created < b.created ? -1 : 1));
  const launched: string[] = [];
  for (const s of queued) {
    if (running >= budget.budget || freemem() < budget.minFreeMb * 1024 * 1024) break;
    let starting: SessionState;
    try {
      ({ state: starting } = await record(p, s.id, { type: 'start' }));
    } catch (err) {
      // Another process started (or someone closed) it first.
      if (isTrellisError(err) && err.code === 'SESSION_REFUSED') continue;
      throw err;
    }
    running++;
    launched.push(s.id);
    try {
      await launch(p, rt, starting, { resume: false });
    } catch {
      // Recorded as failed by launch; the slot is free again.
      running--;
    }
  }
  return launched;
}
