import { randomBytes } from 'node:crypto';
import { TrellisError } from '../../../events/index.js';
import type { InputLanes } from './input-queue.js';
import { checkKeys, hexArgs } from './pane-keys.js';
import type { PaneTarget } from './pane-target.js';
import { tmuxExec } from './tmux-exec.js';

/** Keys and bytes per `send-keys` command (tmux's command line has its own limits). */
const CHUNK = 1024;
/**
 * Time between the end of a paste and its Enter. A TUI reads the paste's end marker and the Enter in
 * one read otherwise, and some (Claude Code's) then take the Enter as part of the paste.
 */
const ENTER_AFTER_PASTE_MS = 40;

const queueKey = (t: PaneTarget) => `${t.socket}\u0000${t.session}`;

/** How long an input waits for another process's input to the same session before taking the lane anyway. */
const LANE_WAIT_MS = 15_000;

/**
 * The session's input lane across processes (the serve, a CLI `prompt` or `keys`, a hook delivering a
 * held prompt): a tmux `wait-for -L` lock on the session's own tmux server, released with `-U`, around
 * one whole input. A holder that died leaves the lock taken: after LANE_WAIT_MS it is taken anyway.
 */
async function acrossProcesses<T>(t: PaneTarget, task: () => Promise<T>): Promise<T> {
  const channel = `trellis-lane-${t.session}`;
  const got = await tmuxExec(t.socket, ['wait-for', '-L', channel], undefined, { timeoutMs: LANE_WAIT_MS });
  try {
    return await task();
  } finally {
    // Also after a timed-out wait: the lock a dead holder left is released with this input's.
    if (got.code !== 127) await tmuxExec(t.socket, ['wait-for', '-U', channel]);
  }
}

/** One whole input on the session's lane: after every earlier one of this process, and alone across processes. */
const lane = <T>(lanes: InputLanes, t: PaneTarget, task: () => Promise<T>): Promise<T> => lanes.serialize(queueKey(t), () => acrossProcesses(t, task));

async function tmux(t: PaneTarget, args: string[], input?: Uint8Array): Promise<void> {
  const r = await tmuxExec(t.socket, args, input);
  if (r.code !== 0) throw new TrellisError('TMUX_FAILED', `tmux ${args[0]} failed for session ${t.session}: ${r.stderr || `exit ${r.code}`}`);
}

/**
 * Delivers text as a bracketed paste, then a separate Enter: `load-buffer -` (the bytes on stdin, so no
 * quoting can touch them) into a buffer of its own, `paste-buffer -p -r -d` to the pane id (`-p`: paste
 * markers when the program asked for them; `-r`: newlines stay newlines; `-d`: the buffer is deleted),
 * then `send-keys Enter`. Serialized with all other input to the session.
 */
export function pasteText(lanes: InputLanes, target: PaneTarget, text: string | Uint8Array, opts: { enter?: boolean } = {}): Promise<void> {
  return lane(lanes, target, () => paste(target, text, opts));
}

async function paste(target: PaneTarget, text: string | Uint8Array, opts: { enter?: boolean } = {}): Promise<void> {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const buffer = `trellis-${randomBytes(6).toString('hex')}`;
  if (bytes.length > 0) await tmux(target, ['load-buffer', '-b', buffer, '-', ';', 'paste-buffer', '-p', '-r', '-d', '-b', buffer, '-t', target.pane], bytes);
  if (opts.enter !== false) {
    if (bytes.length > 0) await new Promise((r) => setTimeout(r, ENTER_AFTER_PASTE_MS));
    await tmux(target, ['send-keys', '-t', target.pane, 'Enter']);
  }
}

/** What a task on the input lane may do to the pane without queueing behind itself. */
export interface Lane {
  keys(keys: readonly string[]): Promise<void>;
  /** A bracketed paste, then Enter unless `enter: false`. */
  paste(text: string, opts?: { enter?: boolean }): Promise<void>;
}

/**
 * The session's input lane (DESIGN §9): `task` runs alone on the pane, between whole inputs of every other
 * writer of this process (prompts, raw keys, answers), with `keys` that send on the lane without queueing
 * behind itself. For a read-then-type step (an answer chosen by what the screen shows).
 */
export function inLane<T>(lanes: InputLanes, target: PaneTarget, task: (lane: Lane) => Promise<T>): Promise<T> {
  return lane(lanes, target, () =>
    task({
      keys: (keys) => tmux(target, ['send-keys', '-t', target.pane, ...checkKeys(keys)]),
      paste: (text, opts) => paste(target, text, opts),
    }),
  );
}

/** Sends allowlisted key names (`Escape`, `C-c`, `Up`, ...) with `send-keys`, serialized. */
export function sendKeys(lanes: InputLanes, target: PaneTarget, keys: readonly string[]): Promise<void> {
  checkKeys(keys);
  return lane(lanes, target, () => tmux(target, ['send-keys', '-t', target.pane, ...keys]));
}

/**
 * Sends raw bytes exactly (`send-keys -H`) on the session's whole lane, across processes too: a viewer's
 * keystrokes in the serve never land inside a prompt another process (a hook delivering a held prompt) is
 * reading the box for or pasting. `via` runs the command on a control client when one is up.
 */
export function sendBytes(lanes: InputLanes, target: PaneTarget, bytes: Uint8Array, via?: (line: string) => Promise<unknown>): Promise<void> {
  return lane(lanes, target, async () => {
    for (let i = 0; i < bytes.length; i += CHUNK) {
      const hex = hexArgs(bytes.subarray(i, i + CHUNK));
      if (via) await via(`send-keys -H -t ${target.pane} ${hex.join(' ')}`);
      else await tmux(target, ['send-keys', '-H', '-t', target.pane, ...hex]);
    }
  });
}
