import { LIVE_STATUSES, type SessionStatus } from '../../events/index.js';
import { isLocalId } from '../issues/thread-id.js';
import type { Project, SessionRegistry } from '../project.js';
import { defaultRuntime } from './runtime.js';
import { promptSession } from './verbs.js';

/**
 * The loop-in seam of the issue verbs, made real: a session is online while its agent is live (starting,
 * running, awaiting, review, merging); notifying it is a prompt, logged on its timeline and pasted into
 * its pane. An offline originator is silent; nothing is ever spawned.
 */
export function sessionRegistry(p: Project): SessionRegistry {
  return {
    isOnline: async (id: string) => isLocalId(id) && LIVE_STATUSES.has((await p.sessionLog.get(id)).status as SessionStatus),
    async notify(id: string, message: string) {
      await promptSession(p, defaultRuntime(), id, message, 'trellis');
    },
  };
}
