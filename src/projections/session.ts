import { emptyUsage, evolveUsage, type SessionUsage } from './session-usage.js';
import { isAfter, type CheckDefinition, type EventKey, type FixedChecks, type SessionEvent, type SessionFacts, type SessionStatus, type Source } from '../events/index.js';

/** One prompt on a session's timeline, whole, with its author. */
export interface TimelineEntry {
  readonly by: string;
  readonly at: string;
  readonly body: string;
  /** Present while the prompt waits to be delivered: why it is not in the pane yet. */
  readonly held?: string;
}

/** The fold of one session's log: everything the session view, the board and `decide` need. */
export interface SessionState extends SessionFacts {
  readonly id: string;
  readonly status: SessionStatus | 'absent';
  readonly clock: number;
  /** Sub-reason of the status: `turn-end`, `tmux-gone`, a quarantine or failure reason; else null. */
  readonly reason: string | null;
  /** What the reason names in words (`awaiting{setup}`: the dialog on screen; the login problem; a dead pane's last lines), else null. */
  readonly detail: string | null;
  /** Source of the latest transition. */
  readonly source: Source | null;
  /**
   * The agent's own channel its latest launch's states came through (issue 41): `protocol` (Codex's
   * app-server), `notify` (Codex's notify program), `hook` (hooks, opencode's server); null before its first.
   */
  readonly channel?: SessionChannel | null;
  readonly unread: boolean;
  readonly harness: string;
  readonly task: string;
  /** The task's first line, shortened: what lists show. */
  readonly title: string;
  readonly nodes: readonly string[];
  readonly issue: string | null;
  readonly base: string;
  readonly branch: string;
  readonly worktree: string;
  readonly by: string;
  readonly created: string;
  readonly updatedAt: string;
  readonly tmux: { readonly session: string; readonly pane: string } | null;
  /** The pane of an agent whose process exited: tmux keeps it (`remain-on-exit`), so its last screen can be read. */
  readonly deadPane: { readonly session: string; readonly pane: string } | null;
  readonly agentSessionId: string | null;
  readonly timeline: readonly TimelineEntry[];
  /** Where uncommitted work was saved on close or quarantine (`refs/trellis/wip/<id>`'s commit). */
  readonly wip: string | null;
  /** Turn failures since the last turn that ended well. */
  readonly turnFailures: number;
  /** The latest turn's failure (the agent's error), until a new turn starts; null when it did not fail. */
  readonly failedTurn: string | null;
  /** Each override of the merge gate, oldest first (DESIGN.md §14). */
  readonly mergeOverrides: readonly MergeOverride[];
  /** The checks fixed at dispatch (DESIGN.md §14); null for a session spawned before the rule. */
  readonly fixedChecks: FixedChecks | null;
  /** Each acceptance of a changed check's new definition, oldest first. */
  readonly checkAcceptances: readonly CheckAcceptance[];
  /** The agent program's version at its latest launch (`claude --version`), or null when it said none. */
  readonly agentVersion: string | null;
  /** What confined its latest launch, or why nothing did (issue 45); null: not launched, or launched before the rule. */
  readonly confinement: Confinement | null;
  /**
   * Whether a turn has run since the latest resume: a resumed agent idle at its input has ended no turn,
   * so its first wait keeps the failure streak (`resume` keeps the count; only a turn that ends well clears it).
   */
  readonly turnSinceResume: boolean;
  /** The agent's own usage records as read so far (issue 42): each response once, turns, context. */
  readonly usage: SessionUsage;
  /** How far each usage record was read (the decider's view of `usage.read`). */
  readonly usageRead: Readonly<Record<string, number>>;
  /** The latest answer to the agent's dialog that took (issue 43): what, who, through which channel, when; null before any. */
  readonly answered: AnswerFact | null;
}

/** A dialog's answer as the session records it: `by` is the door's author, `via` the channel, `at` an ISO instant. */
export interface AnswerFact {
  readonly option: string;
  readonly by: string;
  readonly via: string;
  readonly at: string;
}

/** What keeps a session's agent inside its worktree: `confined` and by what, or not and why. */
export type Confinement = { readonly confined: true; readonly by: string } | { readonly confined: false; readonly why: string };

/** A person's acceptance of changed check definitions: who, when, why, and the definitions accepted. */
export interface CheckAcceptance {
  readonly by: string;
  readonly at: string;
  readonly reason: string;
  readonly scenarios: readonly CheckDefinition[];
}

/** An override of the merge gate: who, when, why, and which scenarios blocked it. */
export interface MergeOverride {
  readonly by: string;
  readonly at: string;
  readonly reason: string;
  readonly scenarios: readonly string[];
}

export const initialSession = (id: string): SessionState => ({
  id,
  status: 'absent',
  clock: 0,
  reason: null,
  detail: null,
  source: null,
  unread: false,
  harness: '',
  task: '',
  title: '',
  nodes: [],
  issue: null,
  base: '',
  branch: '',
  worktree: '',
  by: '',
  created: '',
  updatedAt: '',
  tmux: null,
  deadPane: null,
  agentSessionId: null,
  timeline: [],
  wip: null,
  turnFailures: 0,
  mergeOverrides: [],
  fixedChecks: null,
  checkAcceptances: [],
  failedTurn: null,
  waiting: null,
  pending: [],
  agentVersion: null,
  confinement: null,
  turnSinceResume: true,
  usage: emptyUsage,
  usageRead: {},
  answered: null,
});

export type SessionChannel = 'protocol' | 'notify' | 'hook';

/** The channel an event from `source` says a session of `harness` is on, or null (not the agent's own). */
function channelOf(harness: string, source: Source): SessionChannel | null {
  if (source === 'protocol') return 'protocol';
  if (source === 'hook') return harness === 'codex' ? 'notify' : 'hook';
  return null;
}

/** Where a session's fold stands: the key of the latest event folded (session events carry no id). */
export const sessionLastKey = (s: SessionState): EventKey => ({ clock: s.clock, at: s.updatedAt, id: '' });

const titleOf = (task: string): string => {
  const line = task.split('\n', 1)[0]!.trim();
  return line.length > 72 ? `${line.slice(0, 69)}...` : line;
};

/**
 * Applies one event. Events fold in (clock, at) order (see orderEvents); an event not past the latest
 * one folded is a replay and leaves the state as it is, so folding a log twice gives the same state.
 */
export function evolveSession(state: SessionState, event: SessionEvent): SessionState {
  if (!isAfter(event, sessionLastKey(state))) return state;
  const next: { -readonly [K in keyof SessionState]: SessionState[K] } = { ...state, clock: event.clock, updatedAt: event.at };
  // Each start says its channel anew (a resumed Codex may fall back to notify); not the launch event, which
  // can be logged after the agent's own first signals.
  next.channel = event.type === 'starting' || event.type === 'resumed' ? null : (channelOf(state.harness, event.source) ?? state.channel ?? null);
  const move = (status: SessionStatus, reason: string | null = null, extra: Partial<SessionState> = {}): SessionState => ({
    ...next,
    status,
    reason,
    detail: null,
    source: event.source,
    waiting: null,
    deadPane: null,
    ...extra,
  });
  // Review and merging are the user's: the agent's own waits are followed without moving the status.
  const userOwned = state.status === 'review' || state.status === 'merging';
  switch (event.type) {
    case 'spawned': {
      const d = event.data;
      return move('queued', null, {
        harness: d.harness,
        task: d.task,
        title: titleOf(d.task),
        nodes: [...d.nodes],
        issue: d.issue,
        base: d.base,
        branch: d.branch,
        worktree: d.worktree,
        by: event.by,
        created: event.at,
      });
    }
    case 'starting':
      return move('starting');
    case 'resumed':
      // Resuming a quarantine is a person's decision to try again: its streak starts over. After an
      // interrupt the streak goes on (a killed pane proves nothing about the turns).
      return state.status === 'quarantined' ? move('starting', null, { turnFailures: 0 }) : move('starting', null, { turnSinceResume: false });
    case 'launched': {
      const tmux = { session: event.data.tmuxSession, pane: event.data.pane };
      if (event.data.agentVersion) next.agentVersion = event.data.agentVersion;
      const { confined, unconfined } = event.data;
      next.confinement = confined ? { confined: true, by: confined } : unconfined ? { confined: false, why: unconfined } : null;
      // Logged after the agent's own first signals, the launch keeps the state they set. An agent that
      // signals its own start stays `starting` until it does; one that cannot (a shell) is running.
      if (state.status !== 'starting') return { ...next, tmux };
      return event.data.awaitsSignal ? { ...next, tmux } : move('running', null, { tmux });
    }
    case 'identified':
      return { ...next, agentSessionId: event.data.agentSessionId };
    case 'prompted': {
      const { body, held } = event.data;
      const entry: TimelineEntry = held ? { by: event.by, at: event.at, body, held } : { by: event.by, at: event.at, body };
      return { ...next, unread: false, timeline: [...state.timeline, entry], pending: held ? [...state.pending, state.timeline.length] : state.pending };
    }
    case 'delivered': {
      const i = event.data.index;
      const held = state.timeline[i];
      if (!held?.held) return next;
      const { by, at, body } = held;
      return { ...next, timeline: state.timeline.map((t, j) => (j === i ? { by, at, body } : t)), pending: state.pending.filter((j) => j !== i) };
    }
    case 'undelivered': {
      const i = event.data.index;
      const entry = state.timeline[i];
      if (!entry) return next;
      const { by, at, body } = entry;
      // Held again (or its reason renewed), in the order it was written among the other held prompts.
      const pending = state.pending.includes(i) ? state.pending : [...state.pending, i].sort((a, b) => a - b);
      return { ...next, timeline: state.timeline.map((t, j) => (j === i ? { by, at, body, held: event.data.reason } : t)), pending };
    }
    case 'awaiting': {
      const { reason, detail } = event.data;
      // A turn that ended well clears the failure streak (the idle notice after a failed one does not).
      const turnFailures = reason === 'turn-end' && !event.data.idle && state.failedTurn === null && state.turnSinceResume !== false ? 0 : state.turnFailures;
      if (userOwned) return { ...next, waiting: reason, turnFailures };
      // Any wait is news for whoever looks next.
      return move('awaiting', reason, { unread: true, waiting: reason, detail: detail ?? null, turnFailures });
    }
    case 'running':
      // A new turn: the last one's failure is history.
      // The agent's start signal after a resume is no turn; a prompt that reaches it is.
      if (userOwned) return { ...next, waiting: null, failedTurn: null, turnSinceResume: true };
      return move('running', null, { failedTurn: null, turnSinceResume: state.status !== 'starting' || state.turnSinceResume !== false });
    case 'interrupted':
      return move('interrupted', event.data.reason, {
        unread: state.unread || event.data.reason !== 'by-user',
        tmux: null,
        detail: event.data.detail ?? null,
        deadPane: event.data.reason === 'process-exit' ? state.tmux : null,
      });
    case 'review-requested':
      return move('review', null, { unread: true, waiting: state.waiting });
    case 'merge-dispatched':
      return move('merging', null, { waiting: state.waiting });
    case 'merge-overridden':
      return { ...next, mergeOverrides: [...state.mergeOverrides, { by: event.by, at: event.at, reason: event.data.reason, scenarios: event.data.scenarios }] };
    case 'checks-fixed':
      return { ...next, fixedChecks: event.data };
    case 'check-accepted':
      return { ...next, checkAcceptances: [...state.checkAcceptances, { by: event.by, at: event.at, reason: event.data.reason, scenarios: event.data.scenarios }] };
    case 'closed':
      return move('closed', null, { tmux: null, wip: event.data.wip ?? state.wip });
    case 'quarantined':
      return move('quarantined', event.data.reason, { unread: true, tmux: null, wip: event.data.wip ?? state.wip });
    case 'failed':
      return move('failed', event.data.reason, { unread: true, tmux: null });
    case 'turn-failed':
      return { ...next, turnFailures: state.turnFailures + 1, failedTurn: event.data.reason };
    case 'viewed':
      return { ...next, unread: false };
    case 'answered':
      return { ...next, answered: { option: event.data.option, by: event.by, via: event.data.via, at: event.at } };
    case 'usage': {
      const usage = evolveUsage(state.usage ?? emptyUsage, event);
      return { ...next, usage, usageRead: usage.read };
    }
  }
}

/** Folds a session's events, oldest first, from nothing. */
export const foldSession = (id: string, events: readonly SessionEvent[]): SessionState => events.reduce(evolveSession, initialSession(id));
