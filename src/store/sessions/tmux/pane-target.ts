import type { InputLanes } from './input-queue.js';

/** Where a session's live pane is: the tmux server's socket, the tmux session name, the pane id (`%N`). */
export interface PaneTarget {
  readonly socket: string;
  readonly session: string;
  readonly pane: string;
}

/**
 * The seam between session I/O (this folder's pane stream, input and capture) and the session store:
 * where a session's live pane is. Session I/O never looks a pane up any other way, so a tmux session on
 * our socket that the session log does not know is never reachable through the API.
 */
export interface PaneTargets {
  /**
   * The session's live pane, or null when there is no such session or it has no live pane. With `dead`,
   * also the pane of an agent whose process exited (to read its last screen; nothing is sent to it).
   */
  resolve(sessionId: string, opts?: { dead?: boolean }): Promise<PaneTarget | null>;
  /** The lanes input to these panes takes in this process (the project's SessionWork). */
  readonly lanes: InputLanes;
}
