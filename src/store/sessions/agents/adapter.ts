import type { AwaitReason, SessionCommand } from '../../../events/index.js';
import type { SessionState } from '../../../projections/index.js';
import type { PreflightContext } from './preflight-context.js';

/**
 * A first-run screen an agent shows before it takes a prompt (and before its first hook fires), as the
 * real program draws it. Read from the pane while a session is `starting`: a match is `awaiting{setup}`
 * with the dialog named in `detail`.
 */
export interface SetupScreen {
  /** Text on screen that identifies the dialog (all must be present). */
  readonly match: readonly RegExp[];
  /** The dialog, named for a person: what it asks and how to answer it. */
  readonly detail: string;
}

/** A dialog with no option list, answered by a key each choice names (`trellis session answer <id> stay`). */
export interface KeyedDialog {
  readonly match: RegExp;
  readonly keys: Readonly<Record<string, string>>;
}

/** The program an agent harness runs, and how a person installs it. */
export interface AgentProgram {
  readonly program: string;
  readonly install: string;
}

/** What a launch needs to know: the session, whether this is a resume, and how to call trellis back. */
export interface LaunchContext {
  readonly session: SessionState;
  /** Relaunching an interrupted or quarantined session: continue the agent's own conversation if it can. */
  readonly resume: boolean;
  /** A shell-quoted command line that runs this trellis (`'node' '/…/bin.js'`). */
  readonly trellis: string;
  /**
   * The command line an agent's `session signal` command hooks run instead of `trellis`, when its session
   * has a recorder to reach (`sh '<gitdir>/trellis/hooks/signal.sh' 'node' '/…/bin.js'`: verbs/hook-socket.ts).
   */
  readonly hook?: string;
  /**
   * The online serve's loopback API (`http://127.0.0.1:<port>`), or null/absent when none runs: an
   * agent that can POST its signals (HTTP hooks) sends them there instead of starting a process each.
   */
  readonly apiUrl?: string | null;
  /** Whether the agent runs confined (bubblewrap): a channel it opens inside is not reachable from outside. */
  readonly confined?: boolean;
}

/** A turn signal an adapter maps a hook call to: a command for the session log, minus who and when. */
export type SignalCommand =
  | { readonly type: 'await'; readonly reason: AwaitReason; readonly detail?: string }
  | { readonly type: 'idle' }
  | { readonly type: 'busy' }
  | { readonly type: 'identify'; readonly agentSessionId: string }
  | { readonly type: 'interrupt'; readonly reason: 'process-exit'; readonly detail?: string }
  | { readonly type: 'turn-fail'; readonly reason: string };

/**
 * A harness adapter (one file each): how its agent is launched in a pane, how its native turn signals
 * reach the session log, and its shared-runtime guard. The session runtime knows nothing else about
 * any agent; routes and verbs know nothing about adapters' protocols.
 */
export interface HarnessAdapter {
  readonly name: string;
  /** The shell command line the pane runs. */
  command(ctx: LaunchContext): string;
  /**
   * Confined: what the pane runs outside the sandbox before it (in the background: a watcher of the
   * agent's own channel, which records for Trellis), given the relay's folder the sandbox sees read-only; null: nothing.
   */
  outside?(ctx: LaunchContext, relay: string): string | null;
  /**
   * A process that reads the agent from outside (opencode's event-stream watcher), for a confined launch:
   * the runtime starts it outside the sandbox, as the person. Unconfined, `command` starts it beside the agent.
   */
  watcher?(ctx: LaunchContext): string;
  /**
   * What a confined launch needs of the sandbox, read after `command` (which may write them): files of the
   * Trellis home the agent itself reads (mounted back read-only) and the ports of the agent's own server
   * that Trellis reaches from outside (relayed from the person's loopback into the sandbox's).
   */
  sandbox?(state: SessionState, env: NodeJS.ProcessEnv): { readonly reveal: readonly string[]; readonly expose: readonly number[] };
  /** Installs the adapter's subscription to the agent's signals (hooks) in the worktree. Re-run at every boot. */
  install(worktree: string, ctx: LaunchContext): Promise<void>;
  /** Maps one native signal (`event`, with its JSON payload) to session commands, in order; none: nothing to record. */
  signal(event: string, payload: unknown, state: SessionState): readonly SignalCommand[];
  /** Files the adapter writes into the worktree (its hooks): never saved as the session's work. */
  readonly ownedPaths: readonly string[];
  /** The native events `signal` understands, for usage messages. */
  readonly events: readonly string[];
  /**
   * Whether the agent reads prose at all (a merge is dispatched to it as a prompt). A shell does not:
   * prose typed into it runs as commands.
   */
  readonly readsProse: boolean;
  /** Whether the agent is shown to queue input typed while it works (else a prompt waits for its turn to end). */
  readonly queuesInput: boolean;
  /**
   * Whether a screen of a session believed `running` shows the agent back at its input with no work
   * under way: a turn ended with no signal (Esc). Read from the pane as the fallback (source `pane`).
   */
  idleOnScreen?(screen: string): boolean;
  /**
   * The dialog waiting on a person on a screen of the agent (a pane's plain text), or null: read from the
   * pane while the agent works or sits at its input, so a dialog no hook announces in time still makes the
   * session wait (source `pane`).
   */
  dialogOnScreen?(screen: string): { readonly reason: AwaitReason; readonly detail: string } | null;
  /**
   * What the agent's input box holds, read from a screen with its colors: '' when empty, its text when
   * not, null when no input box is shown (a dialog has the keyboard). A prompt is pasted only into an empty one.
   */
  inputBox?(ansiScreen: string): string | null;
  /**
   * How long after its paste shows in the input box the Enter that confirms a prompt waits (none: at
   * once). Gemini CLI reads an Enter within 30 ms of the key before it as a newline, not a submission.
   */
  readonly enterAfterPasteMs?: number;
  /** Keys that empty the agent's input box (a prompt the agent restored after Esc). */
  readonly clearInputKeys?: readonly string[];
  /** The program the agent runs and how to install it; none for a harness that runs no agent (`shell`). */
  readonly program?: AgentProgram;
  /**
   * What the agent's first run will ask in this project, read from its own config before a spawn: each a
   * warning with its exact repair (`path` is the program found on PATH). None when it has no such check.
   */
  preflight?(ctx: PreflightContext, path: string): Promise<string[]>;
  /** The first-run screens it shows before its first hook (watched while the session is `starting`). */
  readonly firstRunScreens?: readonly SetupScreen[];
  /** Its dialogs that have no option list, answered by the key a choice names. */
  readonly keyedDialogs?: readonly KeyedDialog[];
  /** The agent's own `--version` command line (first word the program), for the session's log. */
  readonly versionArgs?: readonly string[];
  /**
   * Answers the agent's pending permission by the option's name through the agent's own API, for an agent
   * that has one (opencode): the option chosen and every option offered. Without it, none by API.
   */
  answer?(state: SessionState, choice: string): Promise<{ readonly chose: string; readonly options: readonly string[] }>;
  /** The options `answer` takes for the wait the session is in, by name (for a notification's actions); none when it takes none. */
  answerOptions?(state: SessionState): readonly string[];
  /** Whether `answer` takes this session's wait now (absent: always); when not, the wait is answered on its screen. */
  answersByApi?(state: SessionState): boolean;
  /**
   * The shared-runtime guard (spec §4.2 rule 4): before a lifecycle mutation cleans up (kills tmux,
   * removes the worktree), is anything else still using this session's runtime? A reason refuses it.
   */
  guard(state: SessionState, others: readonly SessionState[]): string | null;
}

/** POSIX shell quoting of one word. */
export const shq = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * The command line of an agent's `session signal <id> <event>` command hook: through its recorder's shell
 * program when it has one (`ctx.hook`), else the node hook. The program's command line ends `|| exit 1`: a
 * program that cannot even start (its file gone) exits 1 as a failing node hook does, never 2, which Claude
 * Code reads as "block" (a Stop hook's 2 keeps the agent working).
 */
export const signalCommand = (ctx: LaunchContext, event: string): string =>
  ctx.hook ? `${ctx.hook} session signal ${ctx.session.id} ${event} || exit 1` : `${ctx.trellis} session signal ${ctx.session.id} ${event}`;

/** The guard every adapter shares: never the main checkout; never a worktree or tmux session another live session uses. */
export function commonGuard(state: SessionState, others: readonly SessionState[]): string | null {
  const live = others.filter((o) => o.id !== state.id && !['closed', 'failed', 'absent'].includes(o.status));
  const sharing = live.find((o) => o.worktree === state.worktree);
  if (sharing) return `session ${sharing.id} (${sharing.status}) works in the same worktree ${state.worktree}`;
  const tmuxSharing = state.tmux && live.find((o) => o.tmux?.session === state.tmux!.session);
  if (tmuxSharing) return `session ${tmuxSharing.id} runs in the same tmux session ${state.tmux!.session}`;
  return null;
}
