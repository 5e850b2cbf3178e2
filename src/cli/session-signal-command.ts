import { reactionDue, signalSession } from '../store/sessions/signal-verb.js';
import { cliRuntime } from './cli-runtime.js';
import { hookPane, logIgnored, NotJson, readPayload, spawnDetached } from './hook-input.js';
import { openProject } from './open-project.js';
import { out } from './output.js';
import { checkShape, type Shape, type VerbContext } from './shape.js';
import type { Project } from '../store/compose/open-project.js';

/*
 * `trellis session signal`, the command hook every agent event runs when no serve takes its HTTP hook: a
 * module of its own, loaded without the other session verbs (launch, delivery, merge: issue 40's CPU per
 * event), and listed among them by session-commands.ts.
 */

export const SIGNAL_ACTION: Shape & { readonly run: (ctx: VerbContext, p: Project) => Promise<number> } = {
  args: ['id', 'event'],
  options: ['json'],
  usage: 'trellis session signal <id> <event> [--json]   (the hook JSON on stdin)',
  async run(ctx, p) {
    const payload = readPayload();
    if (payload instanceof NotJson) {
      logIgnored(ctx.args[0]!, ctx.args[1]!, [payload.message]);
      return 0;
    }
    const rt = cliRuntime(p);
    const fromPane = hookPane(rt.tmux.socket);
    const r = await signalSession(p, rt, ctx.args[0]!, ctx.args[1]!, payload, fromPane ? { fromPane } : {});
    if (r.ignored.length) logIgnored(ctx.args[0]!, ctx.args[1]!, r.ignored);
    // The hook only records: a multi-step reaction (the quarantine of repeated turn failures: WIP saved,
    // pane killed, logged) runs in a detached worker of its own session, which the agent cannot kill
    // (2.1.331 kills its running hooks as it exits); the serve's supervisor does the same, idempotently.
    if (reactionDue(r)) {
      spawnDetached(['session', 'react', r.session.id], ctx.cwd);
    }
    // Silent by default: Claude Code adds what some hooks print to the agent's context.
    if (ctx.options.json) await out(`${JSON.stringify(r, null, 2)}\n`);
    return 0;
  },
};

/** `trellis session signal <id> <event>`: what main.ts runs for the hook, without loading session-commands. */
export async function runSignal(ctx: VerbContext): Promise<number> {
  checkShape(SIGNAL_ACTION, ctx);
  return SIGNAL_ACTION.run(ctx, openProject(ctx.cwd));
}
