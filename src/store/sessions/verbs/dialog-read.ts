import { TrellisError } from '../../../events/index.js';
import type { SessionsProject } from '../log/sessions-project.js';
import { adapterOf } from '../agents/index.js';
import { dialogOptions } from '../agents/dialog-options.js';
import { capturePane } from '../tmux/pane-capture.js';
import type { SessionRuntime } from './runtime.js';
import { unknownSession } from '../log/unknown-session.js';

/** The dialog a session waits on, as `session answer` reads it. */
export interface DialogRead {
  /** The session's state and reason when read (`awaiting`, `permission`). */
  readonly state: string;
  readonly reason: string | null;
  /** Each option by name, as `session answer` takes it; empty when the wait has no fixed options (a free answer, or no dialog). */
  readonly options: readonly string[];
  /** Which option the dialog has selected (its default), or null. */
  readonly selected: number | null;
  /** Where the options were read: the agent's API (opencode), the screen, or nowhere. */
  readonly from: 'api' | 'screen' | 'none';
  /**
   * A permission of an agent that draws its dialogs, not on screen yet (its hook can come before the
   * dialog is drawn): read again shortly. False for a shell, which draws none.
   */
  readonly pending: boolean;
}

/**
 * The options of the dialog session `id` shows, by the same reading `answerSession` does (the agent's own
 * API first, then a keyed dialog, then the selection list on the pane): what a notification offers as
 * actions is exactly what an answer will find. Reads only; types nothing.
 */
export async function readDialog(p: SessionsProject, rt: SessionRuntime, id: string): Promise<DialogRead> {
  const state = await p.sessionLog.get(id);
  if (state.status === 'absent') throw await unknownSession(p, id);
  const adapter = adapterOf(state.harness);
  const drawn = state.status === 'awaiting' && state.reason === 'permission' && !!adapter.dialogOnScreen;
  const base = { state: state.status, reason: state.reason ?? null, pending: false };
  if (adapter.answer && adapter.answersByApi?.(state) !== false) {
    const options = adapter.answerOptions?.(state) ?? [];
    return { ...base, options, selected: options.length ? 0 : null, from: options.length ? 'api' : 'none' };
  }
  if (!state.tmux) return { ...base, options: [], selected: null, from: 'none' };
  const screen = await capturePane({ socket: rt.tmux.socket, session: state.tmux.session, pane: state.tmux.pane })
    .then((c) => c.text)
    .catch((err: Error) => {
      throw new TrellisError('SESSION_REFUSED', `session ${id}'s pane cannot be read: ${err.message}`);
    });
  const keyed = adapter.keyedDialogs?.find((k) => k.match.test(screen));
  if (keyed) return { ...base, options: Object.keys(keyed.keys), selected: 0, from: 'screen' };
  const dialog = dialogOptions(screen);
  return dialog ? { ...base, options: dialog.options, selected: dialog.selected, from: 'screen' } : { ...base, options: [], selected: null, from: 'none', pending: drawn };
}
