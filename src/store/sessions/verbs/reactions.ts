import { isTrellisError } from '../../../events/index.js';
import { quarantineDue } from '../../../projections/index.js';
import type { SessionsProject } from '../log/sessions-project.js';
import type { SessionRuntime } from './runtime.js';
import { quarantineSession } from './verbs.js';
import { reactionDue, signalSession } from './signal-verb.js';

/**
 * The reactions a recorded signal calls for, outside the hook that recorded it (run by `trellis session
 * react`, detached, or by the serve's supervisor): a session with repeated turn failures is quarantined.
 * Idempotent: the quarantine is a logged transition, so a second runner finds it done and does nothing.
 */
export async function reactToSignal(p: SessionsProject, rt: SessionRuntime, id: string): Promise<'quarantined' | 'nothing'> {
  const reason = quarantineDue(await p.sessionLog.get(id));
  if (!reason) return 'nothing';
  try {
    await quarantineSession(p, rt, id, 'trellis', reason, 'supervisor');
    return 'quarantined';
  } catch (err) {
    // The serve's supervisor (or another worker) was first.
    if (isTrellisError(err) && err.code === 'SESSION_REFUSED') return 'nothing';
    throw err;
  }
}

/**
 * Records one agent event as `trellis session signal` would, then the reactions it calls for: what an
 * agent's own channel (opencode's event stream) feeds the session log with (Codex's app-server: with `source: 'protocol'`). Returns what was ignored.
 */
export async function signalAndReact(p: SessionsProject, rt: SessionRuntime, id: string, event: string, payload: unknown, how: Parameters<typeof signalSession>[5] = {}): Promise<readonly string[]> {
  const r = await signalSession(p, rt, id, event, payload, how);
  if (reactionDue(r)) await reactToSignal(p, rt, id);
  return r.ignored;
}
