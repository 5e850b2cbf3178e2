import { reactionDue, signalSession } from '../store/sessions/verbs/signal-verb.js';
import { cliRuntime } from './cli-runtime.js';
import { hookPane, logIgnored, NotJson, readPayload, spawnDetached } from './hook-input.js';
import { openSessionLogProject } from '../store/compose/session-log-project.js';
import { out } from './output.js';
import { checkShape, type Shape, type VerbContext } from './shape.js';
import type { SessionLogProject } from '../store/sessions/log/sessions-project.js';

/*
 * `trellis session signal`, the command hook every agent event runs when no serve takes its HTTP hook: a
 * module of its own, loaded without the other session verbs (launch, delivery, merge: issue 40's CPU per
 * event), and listed among them by session-commands.ts.
 */

export const SIGNAL_ACTION: Shape & { readonly run: (ctx: VerbContext, p: SessionLogProject) => Promise<number> } = {
  args: ['id', 'event'],
  options: ['json'],
  usage: 'trellis session signal <id> <event> [--json]   (the hook JSON on stdin)',
  async run(ctx, p) {
    const payload = readPayload();
    const relayed = await viaRelay(ctx, payload);
    if (relayed !== undefined) return relayed;
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

/**
 * Inside a confined agent's sandbox the session's log is read-only: the hook's signal goes out through its
 * relay, which records it for this session (and only this one) outside. Undefined when there is no relay.
 */
async function viaRelay(ctx: VerbContext, payload: ReturnType<typeof readPayload>): Promise<number | undefined> {
  const relay = process.env.TRELLIS_SIGNAL_RELAY;
  if (!relay) return undefined;
  return (await import('../store/sessions/confine/confine-relay.js')).relaySignal(relay, ctx.args[1]!, payload instanceof NotJson || payload === null ? '' : JSON.stringify(payload));
}

/**
 * `trellis session signal <id> <event>`: what main.ts, or the hook's own entry (hook.ts), runs for the
 * hook, without loading session-commands. It opens the session log only: no issue, eval or forge store.
 */
export async function runSignal(ctx: VerbContext): Promise<number> {
  // The agent's pane can be killed while its hook writes (a close or an interrupt kills its tmux session):
  // the terminal's hangup must not end the hook mid-append, which left the session's ref locked, so the
  // close itself waited for the lock and was refused. The hook finishes its one write and exits.
  process.on('SIGHUP', () => {});
  checkShape(SIGNAL_ACTION, ctx);
  // A relayed signal opens no project (the sandbox's copy is read-only, and the relay's side opens it).
  if (process.env.TRELLIS_SIGNAL_RELAY) return (await viaRelay(ctx, readPayload()))!;
  return SIGNAL_ACTION.run(ctx, openSessionLogProject(ctx.cwd));
}
