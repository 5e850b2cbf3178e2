import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { TrellisError } from '../../events/index.js';
import { trellisHome } from '../endpoint-record.js';
import { tmuxExec } from './tmux-exec.js';

/** Where a session's live pane is: the tmux server's socket, the tmux session name, the pane id (`%N`). */
export interface PaneTarget {
  readonly socket: string;
  readonly session: string;
  readonly pane: string;
}

/**
 * The seam between session I/O (this folder's pane stream, input and capture) and the session store:
 * everything session I/O needs to know about a session. The session store provides the real one; the
 * default below finds panes by DESIGN §9's layout alone.
 */
export interface PaneTargets {
  /** The session's live pane, or null when there is no such session or it has no live pane. */
  resolve(sessionId: string): Promise<PaneTarget | null>;
  /**
   * Appends a whole prompt to the session's timeline (an event) before it is delivered. Throws a
   * TrellisError with code APPEND_REFUSED when the session refuses it (closed, quarantined), NOT_FOUND
   * for an unknown session.
   */
  appendPrompt(sessionId: string, body: string, by: string): Promise<void>;
}

/** Session ids that are safe as a tmux target (no `:` `.` `=` or spaces, which tmux reads as syntax). */
export const isPaneSessionId = (id: string): boolean => /^[A-Za-z0-9_-]{1,64}$/.test(id);

/** The tmux socket every session of this user runs on: `$TRELLIS_HOME/tmux.sock` (DESIGN §9). */
export const tmuxSocket = (env: NodeJS.ProcessEnv = process.env): string => join(trellisHome(env), 'tmux.sock');

/**
 * Finds a session's pane by DESIGN §9's layout: the tmux session named after the session id, on
 * `$TRELLIS_HOME/tmux.sock`; its first pane (the one the agent was launched in). It keeps no timeline,
 * so appending a prompt is accepted as is; the session store's own PaneTargets replaces it.
 */
export function tmuxSocketTargets(socket: string = tmuxSocket()): PaneTargets {
  const targets: PaneTargets = {
    resolve: async (sessionId) => {
      if (!isPaneSessionId(sessionId) || !existsSync(socket)) return null;
      const r = await tmuxExec(socket, ['list-panes', '-s', '-t', `=${sessionId}`, '-F', '#{pane_id}']);
      const pane = r.code === 0 ? r.stdout.toString().split('\n')[0]?.trim() : undefined;
      return pane && /^%\d+$/.test(pane) ? { socket, session: sessionId, pane } : null;
    },
    appendPrompt: async (sessionId) => {
      if (!(await targets.resolve(sessionId))) throw new TrellisError('NOT_FOUND', `no session ${sessionId}`);
    },
  };
  return targets;
}
