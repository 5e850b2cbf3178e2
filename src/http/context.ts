import type { LiveProject } from '../store/board/live.js';
import type { Project } from '../store/compose/open-project.js';
import type { PaneTargets } from '../store/sessions/tmux/pane-target.js';

/** What the app serves and who it is. */
export interface AppContext {
  readonly project: Project;
  readonly live: LiveProject;
  readonly instance: { readonly instanceId: string; readonly root: string; readonly startedAt: string };
  /** Where sessions' live panes are, for session I/O (default: as the session log records them). */
  readonly paneTargets?: PaneTargets;
}
