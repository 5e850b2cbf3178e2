/**
 * What the hook-side verbs (`session signal`, `watch-opencode`, `react`, `watch-setup`) need from the
 * process an agent's hook runs them in: its payload on stdin, a log of what was ignored, and a way to
 * start work detached from the hook. A failing hook shows inside the agent's screen, so nothing here throws.
 */
import { childProcess } from '../store/lazy-builtins.js';
import { appendFileSync, fstatSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { trellisHome } from '../store/trellis-home.js';
import { err } from './output.js';

/** Runs `trellis <args>` in a session of its own, detached from the hook (and the agent) that asked for it. */
export function spawnDetached(args: readonly string[], cwd: string): void {
  const child = childProcess().spawn(process.execPath, [process.argv[1]!, ...args], { cwd, detached: true, stdio: 'ignore' });
  child.on('error', (e) => void err(`trellis: cannot start '${args.join(' ')}': ${e.message}\n`));
  child.unref();
}

/**
 * The tmux pane the hook's agent runs in, when it runs on Trellis's own tmux server (`socket`), else
 * undefined: a hook of a program Trellis already replaced is told apart by its pane. `env` is the hook's
 * (a recorder reads it from the request: the sh hook sends its TMUX and TMUX_PANE).
 */
export function hookPane(socket: string, env: { readonly TMUX?: string; readonly TMUX_PANE?: string } = process.env): string | undefined {
  return env.TMUX?.split(',')[0] === socket ? env.TMUX_PANE || undefined : undefined;
}

/** A hook payload that is not JSON: ignored, never a failing hook inside the agent's screen. */
export class NotJson {
  constructor(readonly message: string) {}
}

/**
 * Ignored hook input is logged, not fatal (a failing hook shows up inside the agent's screen): on
 * stderr, and as a line of `$TRELLIS_HOME/signals.log` for whoever explains a status later.
 */
export function logIgnored(id: string, event: string, what: readonly string[], say: (text: string) => void = (text) => void err(text)): void {
  for (const line of what) say(`trellis: session ${id}: ignored ${event} signal: ${line}\n`);
  try {
    appendFileSync(join(trellisHome(), 'signals.log'), `${JSON.stringify({ at: new Date().toISOString(), session: id, event, ignored: what })}\n`);
  } catch {
    // The log is a courtesy: stderr already said it.
  }
}

/**
 * A hook's JSON payload from standard input: a pipe, a file, or a socket (Node-based agents such as
 * Claude Code hand their hooks a socket pair); a terminal is never read. Nothing: null.
 */
export function readPayload(): unknown {
  let st;
  try {
    st = fstatSync(0);
  } catch {
    return null;
  }
  if (!st.isFIFO() && !st.isFile() && !st.isSocket()) return null;
  const text = readFileSync(0, 'utf8').trim();
  if (!text) return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return new NotJson(`the payload on stdin is not JSON (${JSON.stringify(text.slice(0, 60))})`);
  }
}
