import { TrellisError } from '../events/index.js';
import type { PaneTargets } from '../store/sessions/tmux/pane-target.js';
import { captureSession, sendRawKeys } from '../store/sessions/tmux/session-io-verbs.js';
import type { VerbContext } from './shape.js';
import { out } from './output.js';
import { UsageError } from './usage-error.js';

const CAPTURE = 'trellis session capture <id> [--lines <n>] [--ansi] [--json]';
const KEYS = 'trellis session keys <id> <key>...   (Escape, Enter, Tab, Up, C-c, ...; or --hex 1b5b41)';

/** The session I/O actions' usage lines, for the `session` command's help. */
export const sessionIoUsage = (): string => `  ${CAPTURE}\n  ${KEYS}`;

/** The `session` actions this module answers; the `session <action>` dispatcher sends these here. */
export const SESSION_IO_ACTIONS = ['capture', 'keys'] as const;

function only(ctx: VerbContext, allowed: readonly string[], usage: string): void {
  for (const [name, value] of Object.entries(ctx.options)) {
    if (name === '--' || value === undefined) continue;
    if (!allowed.includes(name)) throw new UsageError(`--${name} does not apply here`, usage);
  }
}

/**
 * `trellis session capture|keys`: the same verbs as GET /api/sessions/:id/capture and POST
 * .../rawkey, run in this process against the session's tmux pane.
 */
export async function runSessionIo(action: string, ctx: VerbContext, targets: PaneTargets): Promise<number> {
  const id = ctx.args[0];
  if (action === 'capture') {
    only(ctx, ['lines', 'ansi', 'json'], CAPTURE);
    if (!id || ctx.args.length !== 1) throw new UsageError(id ? `unexpected '${ctx.args.slice(1).join(' ')}'` : 'missing <id>', CAPTURE);
    const lines = ctx.options.lines === undefined ? undefined : Number(ctx.options.lines);
    if (lines !== undefined && !(Number.isInteger(lines) && lines > 0)) throw new UsageError(`--lines takes a positive whole number, not '${String(ctx.options.lines)}'`, CAPTURE);
    const capture = await captureSession(targets, id, { lines, ansi: ctx.options.ansi === true });
    await out(ctx.options.json ? `${JSON.stringify(capture)}\n` : `${capture.log ?? capture.text}\n`);
    return 0;
  }
  if (action === 'keys') {
    only(ctx, ['hex', 'json'], KEYS);
    if (!id) throw new UsageError('missing <id>', KEYS);
    const keys = ctx.args.slice(1);
    const hex = ctx.options.hex === undefined ? undefined : String(ctx.options.hex);
    if ((keys.length === 0) === (hex === undefined)) throw new UsageError('give key names or --hex, not both or neither', KEYS);
    const r = await sendRawKeys(targets, id, hex !== undefined ? { hex } : { keys });
    await out(ctx.options.json ? `${JSON.stringify(r)}\n` : '');
    return 0;
  }
  throw new TrellisError('INVALID_INPUT', `unknown session action '${action}'`);
}
