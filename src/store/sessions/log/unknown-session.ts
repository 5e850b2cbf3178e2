import { unknownId } from '../../project/ids.js';
import type { SessionsProject } from './sessions-project.js';

/** The refusal of a session id no session has, naming the nearest session ids (one rule with issues: ids.ts). */
export const unknownSession = (p: Pick<SessionsProject, 'sessionLog'>, id: string) =>
  unknownId('SESSION_NOT_FOUND', 'session', id, async () => (await p.sessionLog.all()).states.map((s) => s.id), "; 'trellis session ls --all' lists them");
