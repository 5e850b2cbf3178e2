import { TrellisError } from '../../../events/index.js';
import type { PaneTarget } from './pane-target.js';
import { tmuxExec } from './tmux-exec.js';

/** What tmux says about a pane's screen, in one `display -p`. */
export interface PaneInfo {
  readonly cols: number;
  readonly rows: number;
  readonly cursor: { readonly x: number; readonly y: number };
  /** The program switched to the alternate screen (a TUI): tmux keeps no scrollback for it. */
  readonly alternate: boolean;
}

export const PANE_FORMAT = '#{cursor_x} #{cursor_y} #{pane_width} #{pane_height} #{alternate_on}';

export function parsePaneInfo(line: string): PaneInfo {
  const [x, y, cols, rows, alt] = line.trim().split(' ').map(Number);
  return { cols: cols || 80, rows: rows || 24, cursor: { x: x || 0, y: y || 0 }, alternate: alt === 1 };
}

export interface Capture extends PaneInfo {
  readonly pane: string;
  /** The pane's text, the last `lines` lines (scrollback included), with SGR escapes when asked. */
  readonly text: string;
}

/** Most lines one capture returns. */
export const MAX_CAPTURE_LINES = 10_000;

/**
 * The live pane as text: `capture-pane -p` (`-e` keeps colors as escapes, `-J` joins wrapped lines), the
 * last `lines` lines including scrollback, and where the cursor is. One tmux process for both.
 */
export async function capturePane(target: PaneTarget, opts: { lines?: number; ansi?: boolean } = {}): Promise<Capture> {
  const lines = opts.lines ? Math.min(Math.max(1, Math.floor(opts.lines)), MAX_CAPTURE_LINES) : 0;
  const args = ['display-message', '-p', '-t', target.pane, PANE_FORMAT, ';', 'capture-pane', '-p', '-J', '-t', target.pane];
  if (opts.ansi) args.push('-e');
  if (lines > 0) args.push('-S', `-${lines}`);
  const r = await tmuxExec(target.socket, args);
  if (r.code !== 0) throw new TrellisError('NOT_FOUND', `session ${target.session} has no live pane (${r.stderr || `tmux exit ${r.code}`})`);
  const all = r.stdout.toString('utf8').split('\n');
  const info = parsePaneInfo(all[0] ?? '');
  const body = all.slice(1);
  while (body.length && body[body.length - 1]!.replace(/\x1b\[[0-9;]*m/g, '').trim() === '') body.pop();
  return { pane: target.pane, ...info, text: (lines > 0 ? body.slice(-lines) : body).join('\n') };
}
