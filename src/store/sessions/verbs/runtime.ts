import { childProcess } from '../../lazy-builtins.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isTrellisError, TrellisError, type SessionCommand } from '../../../events/index.js';
import type { SessionState } from '../../../projections/index.js';
import { trellisHome } from '../../trellis-home.js';
import { gitRaw } from '../../git/run-git.js';
import { packageRoot } from '../../package-root.js';
import type { SessionsProject } from '../log/sessions-project.js';
import { adapterOf } from '../agents/index.js';
import { shq, type LaunchContext } from '../agents/adapter.js';
import { deliverChecked, type Delivery } from './delivery.js';
import type { InputLanes } from '../tmux/input-queue.js';
import { pasteText } from '../tmux/pane-input.js';
import { hasSetupScreens } from '../agents/setup-screens.js';
import { hasScreens } from './screen-watcher-lease.js';
import { installHookScript } from './hook-socket.js';
import type { BareCommand, SessionRuntime } from '../log/session-runtime.js';
import { addWorktree, copyIncludes, dropBranchIfEmpty, mainRoot, removeWorktree, runSetup } from '../worktrees/worktree.js';
import { claimPooled, kickRefill } from '../worktrees/worktree-pool.js';
import { confinedCommand, confinementFor } from '../confine/confine.js';
import { confinedAgentCommand, networkAllow, relayHookCommand, relaySignalHook } from '../confine/confine-agents.js';
import { ensureUploadsDir } from '../../evidence/uploads.js';

/** Who writes what the runtime itself observes or does. */
export const SUPERVISOR = 'trellis';

export { defaultRuntime, type BareCommand, type SessionRuntime } from '../log/session-runtime.js';

/** The command line that runs this trellis, for hooks and tmux hooks to call back. */
export const trellisCommand = (): string => `${shq(process.execPath)} ${shq(trellisBin())}`;
const trellisBin = (): string => join(packageRoot().dir, 'dist/src/cli/bin.js');


/** Appends a runtime-made command (the supervisor's, a hook's) with the current clock. */
export function record(p: Pick<SessionsProject, 'sessionLog' | 'now'>, id: string, command: BareCommand & { by?: string; source?: SessionCommand['source'] }) {
  return p.sessionLog.write(id, { by: SUPERVISOR, source: 'supervisor', ...command, at: p.now().toISOString() } as SessionCommand);
}

/**
 * Brings a `starting` session up: its worktree (created on a fresh spawn, re-created from its branch on
 * a resume whose worktree is gone), the adapter's hooks, the agent in a detached tmux session, then
 * `launched`. Any failure undoes what this call created (tmux session, worktree, branch) and records
 * `failed` with the reason: a spawn that fails midway leaves nothing behind but its log.
 */
export async function launch(p: SessionsProject, rt: SessionRuntime, state: SessionState, opts: { resume: boolean }): Promise<SessionState> {
  const root = mainRoot(p);
  const adapter = adapterOf(state.harness);
  const made = { worktree: false, branch: false };
  try {
    // Asked first: a session that should run confined and cannot is refused before anything is made.
    const confinement = await confinementFor(state.harness, p.settings().sessions.confine, rt.env);
    if (!existsSync(state.worktree)) {
      const hasBranch = (await gitRaw(root, ['rev-parse', '--verify', '--quiet', `refs/heads/${state.branch}`])).code === 0;
      if (hasBranch) await gitRaw(root, ['worktree', 'prune']).then(() => gitOk(root, ['worktree', 'add', '--quiet', state.worktree, state.branch]));
      // A fresh session takes a warm worktree from the pool when one is ready (DESIGN.md §15); the pool
      // then refills in the background, whether it had one or not.
      else if (!(await claimPooled(p, state.worktree, state.branch, state.base, rt.env))) await addWorktree(root, state.worktree, state.branch, state.base);
      made.worktree = true;
      made.branch = !hasBranch;
      await copyIncludes(root, state.worktree);
      const setup = p.settings().sessions.setup;
      if (setup) {
        const { code, log } = await runSetup(setup, state.worktree, sessionEnv(rt, state, await rt.apiUrl()));
        const { hash } = await p.evidence.put(log);
        if (code !== 0) throw new TrellisError('SPAWN_FAILED', `the setup command '${setup}' exited ${code}; its log is evidence ${hash} (trellis evidence get ${hash})`);
      }
    }
    const apiUrl = await rt.apiUrl();
    // A confined agent reaches no serve: its hooks are commands, which reach Trellis through its relay.
    const agentConfined = confinement.confined && state.harness !== 'shell';
    // An unconfined agent whose session has a recorder beside it (its screen watcher, started below) runs its
    // command hooks as a small shell program that reaches it, not a Node process per event (hook-socket.ts).
    const hook = !confinement.confined && hasScreens(state.harness) ? { hook: installHookScript(p.gitdir, trellisCommand()) } : {};
    const ctx: LaunchContext = { session: state, resume: opts.resume, trellis: trellisCommand(), apiUrl: agentConfined ? null : apiUrl, confined: agentConfined, ...hook };
    // A confined agent's hooks run the relay's light stand-in for `trellis session signal` (one small node
    // process inside, the whole CLI outside); the pane's own hooks below run outside and keep the CLI.
    // Its command hooks (claude's, gemini's) POST to the outer relay with curl when they can (relaySignalHook).
    const agentCtx: LaunchContext = agentConfined ? { ...ctx, trellis: relayHookCommand(), hook: relaySignalHook() } : ctx;
    await adapter.install(state.worktree, agentCtx);
    await rt.tmux.kill(state.id);
    const env = sessionEnv(rt, state, apiUrl);
    // Asked while tmux starts the agent: which version runs is whatever is first on PATH, so the log says it.
    const version = agentVersion(adapter.versionArgs, rt.env);
    // tmux itself says when the agent's process exits (its pane-died hook): no polling per session.
    const paneDied = `run-shell -b ${shq(`cd ${shq(root)} && ${ctx.trellis} session signal ${state.id} exit </dev/null >/dev/null 2>&1`)}`;
    const sandbox = { worktree: state.worktree, mainRoot: root, trellisHome: trellisHome(rt.env), home: rt.env.HOME, branch: state.branch, uploads: uploadsFolder(rt.env) };
    const allow = networkAllow(state.harness, p.settings().sessions.network, rt.env);
    const confinedAgent = (): string => {
      const line = adapter.command(agentCtx);
      // Read after the command: opencode's endpoint (its port, its password's file) is written by it.
      const { reveal = [], expose = [] } = adapter.sandbox?.(state, rt.env) ?? {};
      const outside = adapter.outside ? (relay: string) => adapter.outside!(ctx, relay) : undefined;
      return confinedAgentCommand(rt.env, { ...sandbox, reveal }, state.harness, state.id, trellisBin(), allow, line, expose, outside);
    };
    const command = !confinement.confined ? adapter.command(ctx) : agentConfined ? confinedAgent() : confinedCommand(rt.env, sandbox, adapter.command(ctx));
    const pane = await rt.tmux.launch(state.id, state.worktree, env, command, { 'pane-died': paneDied });
    // What reads a confined agent from outside (opencode's watcher) runs detached by tmux, as the person.
    if (agentConfined && adapter.watcher) await rt.tmux.run(['run-shell', '-b', `cd ${shq(root)} && ${adapter.watcher(ctx)}`]);
    if (hasSetupScreens(state.harness)) {
      // Until the agent's first signal its pane is read for first-run dialogs, by a watcher tmux runs detached.
      const watch = `cd ${shq(root)} && ${ctx.trellis} session watch-setup ${state.id} </dev/null >/dev/null 2>&1`;
      await rt.tmux.run(['run-shell', '-b', watch]);
    }
    // An adapter with native signals: the agent says when it is up, and the session is `starting` until then.
    const agent = await version;
    const confined = confinement.confined ? { confined: confinement.by } : { unconfined: confinement.why };
    const { state: after } = await record(p, state.id, { type: 'launch', tmuxSession: state.id, pane, awaitsSignal: adapter.events.length > 0, ...(agent ? { agentVersion: agent } : {}), ...confined });
    if (hasScreens(state.harness)) {
      // While the session lives its screen is read for dialogs no hook announces, serve or not (screen-watcher.ts).
      const watch = `cd ${shq(root)} && ${ctx.trellis} session watch-screen ${state.id} </dev/null >/dev/null 2>&1`;
      await rt.tmux.run(['run-shell', '-b', watch]);
    }
    // The agent is up: the pool refills behind it (a background process at idle priority).
    if (made.branch) kickRefill(p, rt.env);
    return after;
  } catch (err) {
    // Also when tmux failed midway through its command line: a session by this name is this launch's.
    await rt.tmux.kill(state.id).catch(() => {});
    if (made.worktree) await removeWorktree(root, state.worktree).catch(() => {});
    if (made.branch) await dropBranchIfEmpty(root, state.branch, state.base).catch(() => {});
    const reason = isTrellisError(err) ? err.message : `launch failed: ${(err as Error).message}`;
    await record(p, state.id, { type: 'fail', reason }).catch(() => {});
    throw isTrellisError(err) ? err : new TrellisError('SPAWN_FAILED', reason);
  }
}

/** The uploads folder for a sandbox to mount, or none when it is unsafe (a paste then says why, as it would anyway). */
function uploadsFolder(env: NodeJS.ProcessEnv): string | undefined {
  try {
    return ensureUploadsDir(env);
  } catch {
    return undefined;
  }
}

async function gitOk(cwd: string, args: string[]): Promise<void> {
  const r = await gitRaw(cwd, args);
  if (r.code !== 0) throw new TrellisError('SPAWN_FAILED', `git ${args[0]} failed: ${r.stderr.trim()}`);
}

/** What `args` (the agent's `--version`) prints as its version, or null (no such command, no answer in 5 s). */
function agentVersion(args: readonly string[] | undefined, env: NodeJS.ProcessEnv): Promise<string | null> {
  if (!args || args.length === 0) return Promise.resolve(null);
  return new Promise((resolve) => {
    childProcess().execFile(args[0]!, args.slice(1), { env, timeout: 5_000 }, (err, stdout) => {
      const m = err ? null : /\d+\.\d+\.\d+[^\s]*/.exec(String(stdout));
      resolve(m ? m[0] : null);
    });
  });
}

/** The agent's environment (DESIGN.md §9). */
function sessionEnv(rt: SessionRuntime, state: SessionState, apiUrl: string | null): Record<string, string> {
  return {
    TRELLIS_SESSION: state.id,
    TRELLIS_HOME: trellisHome(rt.env),
    ...(apiUrl ? { TRELLIS_API_URL: apiUrl } : {}),
  };
}

export type { Delivery } from './delivery.js';

/**
 * Delivers text to the session's pane, best-effort, as a bracketed paste and a separate Enter (through
 * session I/O's input, which serializes it with every other input to the session: two prompts, or a
 * prompt and a viewer's keystrokes, never interleave).
 */
export async function deliver(lanes: InputLanes, rt: SessionRuntime, state: SessionState, text: string, opts: { onWait?: (why: string) => void } = {}): Promise<Delivery> {
  if (!state.tmux) return { delivered: false, reason: `session ${state.id} has no live pane (it is ${state.status})` };
  try {
    const info = await rt.tmux.pane(state.tmux.pane);
    if (!info || info.dead) return { delivered: false, reason: `the pane of session ${state.id} ${info ? 'has exited' : 'is gone'}` };
    const target = { socket: rt.tmux.socket, session: state.tmux.session, pane: state.tmux.pane };
    const adapter = adapterOf(state.harness);
    // An agent whose input box can be read gets the checked lane (empty box, landed text, then Enter).
    // Only this session's own task and prompts count as the agent's restored text; anything else is someone typing.
    if (adapter.inputBox) return await deliverChecked(lanes, adapter, target, state, text, { restored: [state.task, ...state.timeline.map((t) => t.body)], ...opts });
    await pasteText(lanes, target, text);
    return { delivered: true };
  } catch (err) {
    return { delivered: false, reason: (err as Error).message };
  }
}
