import { isTrellisError } from '../../events/index.js';
import type { SessionsProject } from './sessions-project.js';
import type { SessionRuntime } from './runtime.js';
import { QUARANTINE_AFTER } from './supervisors.js';
import { quarantineSession } from './verbs.js';

const SUPERVISED = new Set(['running', 'awaiting', 'review', 'merging']);

/**
 * The reactions a recorded signal calls for, outside the hook that recorded it (run by `trellis session
 * react`, detached, or by the serve's supervisor): a session with repeated turn failures is quarantined.
 * Idempotent: the quarantine is a logged transition, so a second runner finds it done and does nothing.
 */
export async function reactToSignal(p: SessionsProject, rt: SessionRuntime, id: string): Promise<'quarantined' | 'nothing'> {
  const s = await p.sessionLog.get(id);
  if (!SUPERVISED.has(s.status) || s.turnFailures < QUARANTINE_AFTER) return 'nothing';
  try {
    await quarantineSession(p, rt, id, 'trellis', `${s.turnFailures} turn failures in a row`, 'supervisor');
    return 'quarantined';
  } catch (err) {
    // The serve's supervisor (or another worker) was first.
    if (isTrellisError(err) && err.code === 'SESSION_REFUSED') return 'nothing';
    throw err;
  }
}
