import { LIVE_STATUSES, type SessionStatus } from '../../../events/index.js';
import { isLocalId } from '../../project/ids.js';
import type { SessionsProject } from '../log/sessions-project.js';
import type { SessionRegistry } from '../../issues/issues-project.js';
import { adapterOf } from '../agents/index.js';
import { defaultRuntime } from './runtime.js';
import { promptSession } from './verbs.js';

/**
 * The loop-in seam of the issue verbs, made real: a session is online while its agent is live (starting,
 * running, awaiting, review, merging) and reads prose (a shell would run the reply as commands);
 * notifying it is a prompt carrying the reply, logged on its timeline and typed into its pane under the
 * delivery rule of every prompt (held until the agent takes input). An offline originator is silent;
 * nothing is ever spawned.
 */
export function sessionRegistry(p: SessionsProject): SessionRegistry {
  return {
    isOnline: async (id: string) => {
      if (!isLocalId(id)) return false;
      const state = await p.sessionLog.get(id);
      return LIVE_STATUSES.has(state.status as SessionStatus) && adapterOf(state.harness).readsProse;
    },
    async notify(id: string, message: string) {
      await promptSession(p, defaultRuntime(), id, message, 'trellis');
    },
  };
}
