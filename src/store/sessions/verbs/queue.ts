import { cpus, freemem } from 'node:os';
import { join } from 'node:path';
import { isTrellisError, LIVE_STATUSES } from '../../../events/index.js';
import type { SessionState } from '../../../projections/index.js';
import type { SessionsProject as Project } from '../log/sessions-project.js';
import { withLock, type LockOptions } from '../../git/ref-lock.js';
import { queueTestPause } from './queue-test-pause.js';
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
 * compare-and-swap append, so two processes passing at once never launch one session twice. The budget
 * is held by the store: the whole pass (read, count, start, launch) runs under the project's queue lock,
 * `<gitdir>/trellis/queue.lock`, so two processes (two CLIs, a CLI and the serve) never count the same
 * free slot; passes in one process also queue behind each other first (its SessionWork), so a process
 * holds the lock once at a time. Returns the ids launched (or that failed to launch).
 */
export function queuePass(p: Project, rt: SessionRuntime): Promise<string[]> {
  return p.sessionWork.queuePass(async () => {
    await queueTestPause('arrived');
    return withLock(join(p.gitdir, 'trellis', 'queue.lock'), QUEUE_LOCK, () => passOnce(p, rt));
  });
}

/**
 * A pass that finds the lock held waits for it rather than skipping: the holder may have read the states
 * before this process queued a session or freed a slot, so only a pass after it sees that change, and
 * "a queued session starts as soon as a slot frees" needs this one. The wait is bounded (a pass launches
 * a few sessions, seconds each); the holder's heartbeat keeps its lock young, so a lock older than
 * `staleMs` is a crashed holder's, broken and taken rather than left to wedge the queue.
 */
const QUEUE_LOCK: LockOptions = { waitMs: 120_000, staleMs: 30_000, takeStale: true };

async function passOnce(p: Project, rt: SessionRuntime): Promise<string[]> {
  const { states } = await p.sessionLog.all();
  const budget = budgetOf(p, states);
  let running = budget.running;
  await queueTestPause('counted');
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
