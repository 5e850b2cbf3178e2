import { TrellisError } from '../../../events/index.js';
import { capturePane, type Capture } from './pane-capture.js';
import { parseHex } from './pane-keys.js';
import { sendBytes, sendKeys } from './pane-input.js';
import type { PaneHub } from './pane-stream.js';
import type { PaneTarget, PaneTargets } from './pane-target.js';

/**
 * The session I/O verbs, one function each, shared by the HTTP routes and `trellis session ...`.
 */

async function live(targets: PaneTargets, id: string, opts: { dead?: boolean } = {}): Promise<PaneTarget> {
  const target = await targets.resolve(id, opts);
  if (!target) throw new TrellisError('SESSION_NOT_FOUND', `no session ${id} with a ${opts.dead ? 'live or exited' : 'live'} pane; 'trellis session ls' lists the live ones`);
  return target;
}

export interface CaptureResult extends Capture {
  readonly id: string;
  /** On the alternate screen: the tail of the server's own output log (tmux keeps no scrollback there). */
  readonly log?: string;
}

/**
 * `capture`: the pane as text (and, for a pane on the alternate screen, the server's output log). A pane
 * whose agent exited is read too: its last screen says why.
 */
export async function captureSession(targets: PaneTargets, id: string, opts: { lines?: number; ansi?: boolean } = {}, hub?: PaneHub): Promise<CaptureResult> {
  const target = await live(targets, id, { dead: true });
  const capture = await capturePane(target, opts);
  const log = capture.alternate ? hub?.log(target) : undefined;
  return { id, ...capture, ...(log && log.size > 0 ? { log: log.tail(opts.lines ?? capture.rows, opts.ansi) } : {}) };
}

/** `rawkey`: allowlisted key names, or exact bytes as hex. Resolves with how many keys or bytes went. */
export async function sendRawKeys(targets: PaneTargets, id: string, input: { keys?: readonly string[]; hex?: string }): Promise<{ sent: number }> {
  if ((input.keys === undefined) === (input.hex === undefined)) throw new TrellisError('INVALID_INPUT', 'give either keys: [...] or hex: "..."');
  const bytes = input.hex !== undefined ? parseHex(input.hex) : undefined;
  const target = await live(targets, id);
  if (bytes) {
    await sendBytes(targets.lanes, target, bytes);
    return { sent: bytes.length };
  }
  await sendKeys(targets.lanes, target, input.keys!);
  return { sent: input.keys!.length };
}
