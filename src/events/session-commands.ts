import type { CommandMeta } from './thread-commands.js';
import type { UsageData } from './usage-events.js';
import type { AwaitReason, CheckDefinition, Confined, FixedChecks, InterruptReason, Source, SpawnedData } from './session-events.js';

/** Where a session is in its life (DESIGN.md §9). `absent`: no log yet. */
export type SessionStatus = 'queued' | 'starting' | 'running' | 'awaiting' | 'review' | 'merging' | 'interrupted' | 'quarantined' | 'failed' | 'closed';

/** Every status a session can be in, in the order of its life. */
export const SESSION_STATUSES: readonly SessionStatus[] = ['queued', 'starting', 'running', 'awaiting', 'review', 'merging', 'interrupted', 'quarantined', 'failed', 'closed'];

/** Statuses that hold a slot of the budget: an agent process is (or is about to be) running. */
export const LIVE_STATUSES: ReadonlySet<SessionStatus> = new Set(['starting', 'running', 'awaiting', 'review', 'merging']);

/** Who and when, plus which source caused it (every session transition records one). */
export interface SessionCommandMeta extends CommandMeta {
  readonly source: Source;
}

export type SessionCommand = SessionCommandMeta &
  (
    /** `checks`: what its checks are fixed to at dispatch, logged with the spawn in one append (DESIGN.md §14). */
    | ({ readonly type: 'spawn'; readonly checks?: FixedChecks } & SpawnedData)
    | { readonly type: 'start' }
    | ({ readonly type: 'launch'; readonly tmuxSession: string; readonly pane: string; readonly awaitsSignal?: boolean; readonly agentVersion?: string } & Confined)
    | { readonly type: 'identify'; readonly agentSessionId: string }
    /** `queuesInput`: the harness's agent queues input typed while it works (a shell does; Claude Code is not shown to). */
    | { readonly type: 'prompt'; readonly body: string; readonly queuesInput?: boolean }
    /** Delivers the oldest held prompt, if the agent now takes input. */
    | { readonly type: 'deliver'; readonly queuesInput?: boolean }
    /**
     * Prompt `index` did not reach the agent (its input box was not on screen, or held someone's text):
     * it is held again, `reason` saying why, never lost. `waiting`: the wait its typing answered, back
     * while the agent still sits at it.
     */
    | { readonly type: 'undeliver'; readonly index: number; readonly reason: string; readonly waiting?: AwaitReason | null }
    | { readonly type: 'await'; readonly reason: AwaitReason; readonly detail?: string }
    /** The agent sits at its input with nothing to do (an idle notification, a resume with no prompt, the input box back on screen). */
    | { readonly type: 'idle' }
    /**
     * The agent works. `left`: the wait a person's answer ended; the agent left it only while the session
     * still shows that wait (a signal that landed since, the turn going on or ending, is the later fact).
     */
    | { readonly type: 'busy'; readonly left?: AwaitReason }
    /** A person's answer to the dialog took (the screen moved): which option, and through which door (`via`: the page, the CLI, ntfy…). */
    | { readonly type: 'answer'; readonly option: string; readonly via: string }
    | { readonly type: 'interrupt'; readonly reason: InterruptReason; readonly detail?: string }
    | { readonly type: 'resume' }
    | { readonly type: 'review' }
    | { readonly type: 'merge' }
    | { readonly type: 'override-merge'; readonly reason: string; readonly scenarios: readonly string[] }
    | { readonly type: 'close'; readonly wip: string | null }
    | { readonly type: 'quarantine'; readonly reason: string; readonly wip: string | null }
    | { readonly type: 'fail'; readonly reason: string }
    | { readonly type: 'turn-fail'; readonly reason: string }
    | { readonly type: 'view' }
    | ({ readonly type: 'fix-checks' } & FixedChecks)
    | { readonly type: 'accept-check'; readonly reason: string; readonly scenarios: readonly CheckDefinition[] }
    /** Records what a read of the agent's usage record found; nothing when the read started at a stale offset. */
    | ({ readonly type: 'record-usage' } & UsageData)
  );

export type SessionCommandType = SessionCommand['type'];

/** The facts `decide` needs; the session projection satisfies this shape (one fold, not two). */
export interface SessionFacts {
  readonly status: SessionStatus | 'absent';
  readonly clock: number;
  readonly reason: string | null;
  /** What the status's reason means in words (the setup dialog on screen, the login problem, a dead pane's last lines), or null. */
  readonly detail: string | null;
  readonly unread: boolean;
  readonly agentSessionId: string | null;
  /** The tmux session and pane, once launched (null before, and after the agent is stopped). */
  readonly tmux: { readonly session: string; readonly pane: string } | null;
  /**
   * What the agent itself last waited for, whatever status the user gave the session (review and
   * merging keep following the agent): null while it works or before it started.
   */
  readonly waiting: AwaitReason | null;
  /** Timeline indexes of prompts held until the agent takes input, oldest first. */
  readonly pending: readonly number[];
  /** The prompts in the order written, each with why it is held while it is (the projection's timeline). */
  readonly timeline?: readonly { readonly held?: string }[];
  /** The session's checks as fixed at dispatch (a `checks-fixed` event), or null before (and for sessions older than the rule). */
  readonly fixedChecks?: FixedChecks | null;
  /** How far each usage record of the agent was read (bytes), by its path: a read from another offset is stale. */
  readonly usageRead?: Readonly<Record<string, number>>;
}
