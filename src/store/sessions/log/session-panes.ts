import { LIVE_STATUSES } from '../../../events/index.js';
import { isLocalId } from '../../project/ids.js';
import type { PaneTargets } from '../tmux/pane-target.js';
import type { SessionsProject } from './sessions-project.js';

/** Panes as the session log records them: a live session's launched tmux session and pane, on `socket`. */
export function sessionPaneTargets(p: SessionsProject, socket: string): PaneTargets {
  return {
    lanes: p.sessionWork.input,
    resolve: async (sessionId, opts = {}) => {
      if (!isLocalId(sessionId)) return null;
      const state = await p.sessionLog.get(sessionId);
      if (opts.dead && state.status === 'interrupted' && state.deadPane) return { socket, session: state.deadPane.session, pane: state.deadPane.pane };
      if (state.status === 'absent' || !LIVE_STATUSES.has(state.status) || !state.tmux) return null;
      return { socket, session: state.tmux.session, pane: state.tmux.pane };
    },
  };
}
