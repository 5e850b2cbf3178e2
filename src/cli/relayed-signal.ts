import { childProcess } from '../store/lazy-builtins.js';
import { isTrellisError } from '../events/index.js';
import { reactionDue, signalSession } from '../store/sessions/verbs/signal-verb.js';
import { cliRuntime } from './cli-runtime.js';
import { hookPane, logIgnored } from './hook-input.js';
import { openProject } from './open-project.js';
import type { Project } from '../store/compose/open-project.js';
import { warmPriceTable } from '../store/sessions/usage/usage-price.js';

/**
 * The relay's project, opened once and kept between its signals: its session log keeps the session's fold
 * and reads only the events since (issue 41: a fresh project per signal read the stream again, forking git
 * when the projection cache did not hold its tip, ~40 ms before the hook's transition was decided). Every
 * append is still a compare-and-swap against the ref, and settings are re-read when their files change.
 */
let opened: { readonly cwd: string; readonly p: Project } | undefined;
const projectAt = (cwd: string): Project => (opened?.cwd === cwd ? opened : (opened = { cwd, p: openProject(cwd) })).p;

/** What the relay loads while the sandbox and the agent start: the price table the first turn's usage needs. */
export function warmRelayedSignal(): void {
  warmPriceTable();
}

/**
 * `trellis session signal` for a confined agent's hook, run in its relay's own process outside the
 * sandbox (confine-relay.ts loads this file, beside the bin, as the sandbox starts): the same recording
 * as the command hook's, without a CLI's start-up per hook. `session` is the relay's own, whatever the
 * hook named; a payload that is not JSON is logged and ignored, as the command hook does. What the hook
 * would say on stderr goes to `say` (the relay's HTTP answer to the hooks' shell program). Its exit status.
 */
export async function recordRelayedSignal(cwd: string, session: string, event: string, text: string, say: (line: string) => void = (line) => void process.stderr.write(line)): Promise<number> {
  const bin = new URL('./bin.js', import.meta.url).pathname;
  return recordSignalText(() => projectAt(cwd), session, event, text, { cwd, bin, env: process.env, say });
}

/** Where a recorded hook signal came from and where what it says goes (recordSignalText). */
export interface SignalOrigin {
  /** The folder a reaction's worker starts in, and the trellis executable it runs. */
  readonly cwd: string;
  readonly bin: string;
  /** The hook's TMUX and TMUX_PANE: a hook of a program Trellis already replaced is told apart by its pane. */
  readonly env: { readonly TMUX?: string; readonly TMUX_PANE?: string };
  /** Where the hook's stderr lines go (what was ignored, why it was refused). */
  readonly say: (line: string) => void;
}

/**
 * A hook's signal recorded in a long-lived process (a confined session's relay; a session's recorder,
 * hook-recorder.ts) exactly as the command hook records it (session-signal-command.ts): the same decision,
 * the same ignored-payload logging, the same detached reaction. Its exit status: 0 recorded or ignored, 1 refused.
 */
export async function recordSignalText(project: () => Project, session: string, event: string, text: string, from: SignalOrigin): Promise<number> {
  let payload: unknown = null;
  if (text.trim()) {
    try {
      payload = JSON.parse(text) as unknown;
    } catch {
      logIgnored(session, event, [`the payload on stdin is not JSON (${JSON.stringify(text.trim().slice(0, 60))})`], from.say);
      return 0;
    }
  }
  try {
    const p = project();
    const rt = cliRuntime(p);
    const fromPane = hookPane(rt.tmux.socket, from.env);
    const r = await signalSession(p, rt, session, event, payload, fromPane ? { fromPane } : {});
    if (r.ignored.length) logIgnored(session, event, r.ignored, from.say);
    // A reaction (the quarantine of repeated failures) runs detached, as the command hook starts it.
    if (reactionDue(r)) {
      const child = childProcess().spawn(process.execPath, [from.bin, 'session', 'react', r.session.id], { cwd: from.cwd, detached: true, stdio: 'ignore' });
      child.on('error', () => {});
      child.unref();
    }
    return 0;
  } catch (err) {
    from.say(`trellis: ${isTrellisError(err) ? err.message : (err as Error).message}\n`);
    return 1;
  }
}
