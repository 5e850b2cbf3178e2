import { isTrellisError } from '../../../events/index.js';
import type { SessionState } from '../../../projections/index.js';
import type { SessionLogProject } from '../log/sessions-project.js';
import { adapterOf } from '../agents/index.js';
import { capturePane } from '../tmux/pane-capture.js';
import { record, type BareCommand, type SessionRuntime } from './runtime.js';

/** Reads in a row that must show the agent idle (a turn's first instants can look idle for one read). */
const IDLE_READS = 2;
/** Waits on a person that the screen can show answered (a dialog gone, the input box back). */
const DIALOG_WAITS = new Set(['permission', 'question', 'dialog']);

/** Whether the pane of session `s` is read on this pass: its agent works, or waits where its screen can say more. */
export function screenWatched(s: SessionState): boolean {
  if (!s.tmux) return false;
  const adapter = adapterOf(s.harness);
  if (!adapter.idleOnScreen && !adapter.dialogOnScreen) return false;
  return s.status === 'running' || (s.status === 'awaiting' && (s.reason === 'turn-end' || DIALOG_WAITS.has(s.reason ?? '')));
}

/**
 * The pane beside the hooks (DESIGN.md §9: whichever says it first, each with its source `pane`): a
 * dialog on screen while the agent works or sits at its input is a wait on a person at once (2.1.331's
 * auto-mode dialog has no hook but a notification 6–7 s later); a running agent showing its idle input on
 * consecutive reads ended its turn with no signal (Esc); a dialog wait whose dialog is gone with the input
 * box back was answered in the terminal with no signal (a rejection by Esc). `idleReads` counts per session.
 * `screen` is the pane's text as read by the watch (pane-watch.ts). True when one more read is needed
 * whether or not the pane writes again: an idle screen seen once, to be seen idle again. `dialogsOnly`
 * (a session's own watcher): dialogs alone; an idle screen is left to the hooks and a serve.
 */
export async function readScreen(p: SessionLogProject, s: SessionState, screen: string, idleReads: Map<string, number>, opts: { dialogsOnly?: boolean } = {}): Promise<boolean> {
  const adapter = adapterOf(s.harness);
  const dialog = adapter.dialogOnScreen?.(screen) ?? null;
  if (dialog) {
    idleReads.delete(s.id);
    if (s.status === 'running' || s.waiting !== dialog.reason) await write(p, s.id, [{ type: 'await', reason: dialog.reason, detail: dialog.detail }]);
    return false;
  }
  if (opts.dialogsOnly) return false;
  const idle = adapter.idleOnScreen?.(screen) ?? false;
  const waitsOnDialog = s.status === 'awaiting' && DIALOG_WAITS.has(s.reason ?? '');
  const reads = idle && (s.status === 'running' || waitsOnDialog) ? (idleReads.get(s.id) ?? 0) + 1 : 0;
  idleReads.set(s.id, reads);
  if (reads === 0) return false;
  if (reads < IDLE_READS) return true;
  idleReads.delete(s.id);
  // A dialog answered with no signal: the agent left it (busy), and its input box is back (idle).
  await write(p, s.id, waitsOnDialog ? [{ type: 'busy' }, { type: 'idle' }] : [{ type: 'idle' }]);
  return false;
}

/** Appends each command from the pane, re-decided against the log: a hook that landed since wins. */
async function write(p: SessionLogProject, id: string, commands: readonly BareCommand[]): Promise<void> {
  for (const command of commands) {
    await record(p, id, { ...command, source: 'pane' }).catch((err: unknown) => {
      if (!(isTrellisError(err) && err.code === 'SESSION_REFUSED')) throw err;
    });
  }
}

/**
 * Before a prompt is typed: a dialog on the agent's screen that the log does not know yet (no hook said
 * it) is recorded first (source `pane`), so the prompt is held instead of typed into the dialog.
 */
export async function noteScreenDialog(p: SessionLogProject, rt: SessionRuntime, s: SessionState): Promise<void> {
  const adapter = adapterOf(s.harness);
  if (!s.tmux || !adapter.dialogOnScreen || !(s.status === 'running' || s.status === 'awaiting')) return;
  const screen = await capturePane({ socket: rt.tmux.socket, session: s.tmux.session, pane: s.tmux.pane }).then((c) => c.text, () => null);
  const dialog = screen === null ? null : adapter.dialogOnScreen(screen);
  if (dialog && (s.status === 'running' || s.waiting !== dialog.reason)) await write(p, s.id, [{ type: 'await', reason: dialog.reason, detail: dialog.detail }]);
}
