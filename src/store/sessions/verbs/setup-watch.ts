import { setTimeout as sleep } from 'node:timers/promises';
import { isTrellisError } from '../../../events/index.js';
import type { SessionState } from '../../../projections/index.js';
import type { SessionsProject } from '../log/sessions-project.js';
import { capturePane } from '../tmux/pane-capture.js';
import { record, type SessionRuntime } from './runtime.js';
import { setupDialog } from '../agents/setup-screens.js';

/** How long a session may sit before its first signal with the watcher still reading its pane. */
export const SETUP_WATCH_MS = 60 * 60_000;

const inSetup = (s: SessionState): boolean => s.status === 'awaiting' && s.reason === 'setup';

/**
 * Reads a starting session's pane for the agent's first-run dialogs until the agent's own first signal
 * (DESIGN.md §9: hooks first, the pane as the fallback). A dialog on screen is `awaiting{setup}` naming
 * it (source `pane`); a dialog answered with no signal yet is `starting` again. Ends when the agent has
 * signalled, its pane is gone or dead (tmux's pane-died hook reports the exit), or after `maxMs`.
 * Run detached by the launch (`trellis session watch-setup`), so it works with no server online.
 */
export async function watchSetup(p: SessionsProject, rt: SessionRuntime, id: string, opts: { maxMs?: number } = {}): Promise<'signalled' | 'gone' | 'timeout'> {
  const started = Date.now();
  for (;;) {
    const state = await p.sessionLog.get(id);
    if (state.status !== 'starting' && !inSetup(state)) return 'signalled';
    // The launch records the pane just after tmux starts it: until then, the session's own tmux session.
    const pane = state.tmux?.pane ?? (await paneOfSession(rt, id));
    if (pane) {
      const info = await rt.tmux.pane(pane);
      if (!info || info.dead) return 'gone';
      const screen = await capturePane({ socket: rt.tmux.socket, session: id, pane }).then((c) => c.text, () => null);
      if (screen !== null) {
        const dialog = setupDialog(state.harness, screen);
        const command = dialog ? ({ type: 'await', reason: 'setup', detail: dialog } as const) : inSetup(state) ? ({ type: 'start' } as const) : null;
        // A signal can land between the read and the write: the session log re-decides, or refuses a start.
        if (command && (dialog === null || dialog !== state.detail)) await record(p, id, { ...command, source: 'pane' }).catch(ignoreRefusal);
      }
    }
    const elapsed = Date.now() - started;
    if (elapsed > (opts.maxMs ?? SETUP_WATCH_MS)) return 'timeout';
    // Quick while an agent usually starts; slower for a dialog left open.
    await sleep(elapsed < 120_000 ? 200 : 1_000);
  }
}

async function paneOfSession(rt: SessionRuntime, id: string): Promise<string | null> {
  const r = await rt.tmux.run(['display-message', '-p', '-t', `=${id}:`, '#{pane_id}']);
  return r.code === 0 ? r.stdout.trim() || null : null;
}

function ignoreRefusal(err: unknown): void {
  if (isTrellisError(err) && err.code === 'SESSION_REFUSED') return;
  throw err;
}
