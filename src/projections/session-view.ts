import type { SessionSummary } from './session-list.js';
import { sessionSummary } from './session-list.js';
import { usageView, type UsageView } from './session-usage.js';
import type { AnswerFact, CheckAcceptance, MergeOverride, SessionState, TimelineEntry } from './session.js';

/** One session, whole: what `trellis session show --json` prints and GET /api/sessions/:id answers. */
export interface SessionView extends SessionSummary {
  readonly task: string;
  readonly by: string;
  readonly created: string;
  readonly base: string;
  readonly worktree: string;
  readonly tmux: { readonly session: string; readonly pane: string } | null;
  readonly agentSessionId: string | null;
  readonly wip: string | null;
  readonly turnFailures: number;
  /** The latest turn's failure (the agent's own error), until a new turn starts. */
  readonly failedTurn: string | null;
  /** What the agent itself waits for (review and merging follow it too); null while it works. */
  readonly waiting: string | null;
  /** Prompts held on the timeline until the agent takes input (their entries carry `held`). */
  readonly pending: number;
  readonly timeline: readonly TimelineEntry[];
  /** Overrides of the merge gate, oldest first. */
  readonly mergeOverrides: readonly MergeOverride[];
  /** Each person's acceptance of changed check definitions, oldest first (what the review's checks then run). */
  readonly checkAcceptances: readonly CheckAcceptance[];
  /** The agent program's version at its latest launch, or null. */
  readonly agentVersion: string | null;
  /** Tokens per model, dollars, turns and context in use, from the agent's own records (issue 42); a shell says it has none. */
  readonly usage: UsageView;
  /** The agent's own channel its states come through since its latest launch: protocol, notify or hook; null before its first (issue 41). */
  readonly channel: 'protocol' | 'notify' | 'hook' | null;
  /** The latest answer to its dialog that took: the option, who (the door's author), through which channel, when (issue 43). */
  readonly answered: AnswerFact | null;
}

export function sessionView(s: SessionState): SessionView {
  return {
    ...sessionSummary(s),
    task: s.task,
    by: s.by,
    created: s.created,
    base: s.base,
    worktree: s.worktree,
    tmux: s.tmux,
    agentSessionId: s.agentSessionId,
    wip: s.wip,
    turnFailures: s.turnFailures,
    failedTurn: s.failedTurn,
    waiting: s.waiting,
    pending: s.pending.length,
    timeline: s.timeline,
    mergeOverrides: s.mergeOverrides,
    checkAcceptances: s.checkAcceptances,
    agentVersion: s.agentVersion ?? null,
    usage: usageView(s.harness, s.usage),
    answered: s.answered ?? null,
    channel: s.channel ?? null,
  };
}
