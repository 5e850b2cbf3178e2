import { TrellisError, type SessionCommand } from '../../../events/index.js';
import type { SessionState } from '../../../projections/index.js';
import { isLocalId } from '../../project/ids.js';
import type { SessionLogProject } from './sessions-project.js';
import type { BareCommand } from './session-runtime.js';
import { unknownSession } from './unknown-session.js';

/*
 * A session's state and one appended command: what an agent's hook does (signal-verb.ts), apart from the
 * person's verbs (verbs.ts), so the hook loads the session log and not what launches, delivers or merges.
 */

/** Session `id`'s state, or a SESSION_NOT_FOUND naming the nearest ids. */
export async function sessionState(p: SessionLogProject, id: string): Promise<SessionState> {
  if (!isLocalId(id)) throw new TrellisError('SESSION_NOT_FOUND', `no session ${JSON.stringify(id)}`);
  const state = await p.sessionLog.get(id);
  if (state.status === 'absent') throw await unknownSession(p, id);
  return state;
}

/** Appends `command` to session `id`'s stream as `by` now (the state machine decides; the signal verb uses it too). */
export const appendCommand = (p: SessionLogProject, id: string, command: BareCommand, by: string, source: SessionCommand['source'] = 'user') =>
  p.sessionLog.write(id, { ...command, by, at: p.now().toISOString(), source } as SessionCommand);
