import { childProcess } from '../store/lazy-builtins.js';
import { isTrellisError } from '../events/index.js';
import { reactionDue, signalSession } from '../store/sessions/verbs/signal-verb.js';
import { cliRuntime } from './cli-runtime.js';
import { hookPane, logIgnored } from './hook-input.js';
import { openProject } from './open-project.js';

/**
 * `trellis session signal` for a confined agent's hook, run in its relay's own process outside the
 * sandbox (confine-relay.ts loads this file, beside the bin, as the sandbox starts): the same recording
 * as the command hook's, without a CLI's start-up per hook. `session` is the relay's own, whatever the
 * hook named; a payload that is not JSON is logged and ignored, as the command hook does. Its exit status.
 */
export async function recordRelayedSignal(cwd: string, session: string, event: string, text: string): Promise<number> {
  let payload: unknown = null;
  if (text.trim()) {
    try {
      payload = JSON.parse(text) as unknown;
    } catch {
      logIgnored(session, event, [`the payload on stdin is not JSON (${JSON.stringify(text.slice(0, 60))})`]);
      return 0;
    }
  }
  try {
    const p = openProject(cwd);
    const rt = cliRuntime(p);
    const fromPane = hookPane(rt.tmux.socket);
    const r = await signalSession(p, rt, session, event, payload, fromPane ? { fromPane } : {});
    if (r.ignored.length) logIgnored(session, event, r.ignored);
    // A reaction (the quarantine of repeated failures) runs detached, as the command hook starts it.
    if (reactionDue(r)) {
      const bin = new URL('./bin.js', import.meta.url).pathname;
      const child = childProcess().spawn(process.execPath, [bin, 'session', 'react', r.session.id], { cwd, detached: true, stdio: 'ignore' });
      child.on('error', () => {});
      child.unref();
    }
    return 0;
  } catch (err) {
    process.stderr.write(`trellis: ${isTrellisError(err) ? err.message : (err as Error).message}\n`);
    return 1;
  }
}
