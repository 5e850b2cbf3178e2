import type { SessionStatus, Source } from '../events/index.js';
import type { Confinement, SessionState } from './session.js';

/** A session as lists and the board show it (the `sessions` entries of GET /api/graph). */
export interface SessionSummary {
  readonly id: string;
  readonly title: string;
  readonly harness: string;
  readonly state: SessionStatus;
  /** Sub-reason of the state (`turn-end`, `tmux-gone`, ...), or null. */
  readonly reason: string | null;
  /** The reason in words (`awaiting{setup}`: the dialog on screen; the login problem; a dead pane's last lines), or null. */
  readonly detail: string | null;
  /** Who caused the latest transition: user, hook, pane, process or supervisor. */
  readonly source: Source | null;
  readonly unread: boolean;
  readonly nodes: readonly string[];
  readonly issue: string | null;
  readonly branch: string;
  readonly updatedAt: string;
  /** Failed turns in a row, when the latest turn failed (absent otherwise): the inbox lists such a session. */
  readonly turnFailures?: number;
  /** What confined its latest launch, or why nothing did (absent: not launched, or before the rule). */
  readonly confinement?: Confinement;
}

export function sessionSummary(s: SessionState): SessionSummary {
  return {
    id: s.id,
    title: s.title,
    harness: s.harness,
    state: s.status as SessionStatus,
    reason: s.reason,
    detail: s.detail,
    source: s.source,
    unread: s.unread,
    nodes: s.nodes,
    issue: s.issue,
    branch: s.branch,
    updatedAt: s.updatedAt,
    ...(s.turnFailures ? { turnFailures: s.turnFailures } : {}),
    ...(s.confinement ? { confinement: s.confinement } : {}),
  };
}

// Memoized per read of the session log (the store reuses its read while no tip moved).
const listOf = new WeakMap<readonly SessionState[], readonly SessionSummary[]>();

/**
 * The session list: every session, most recently active first (id breaks ties, so the order is the same
 * wherever it is built). Closed sessions are kept; surfaces filter.
 */
export function sessionList(states: readonly SessionState[]): readonly SessionSummary[] {
  const memo = listOf.get(states);
  if (memo) return memo;
  const list = states
    .filter((s) => s.status !== 'absent')
    .map(sessionSummary)
    .sort((a, b) => (a.updatedAt === b.updatedAt ? (a.id < b.id ? -1 : 1) : a.updatedAt < b.updatedAt ? 1 : -1));
  listOf.set(states, list);
  return list;
}
