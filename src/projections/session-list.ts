import type { SessionStatus, Source } from '../events/index.js';
import type { Confinement, SessionState } from './session.js';
import { usageView } from './session-usage.js';

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
  /** What the agent's model use cost so far (absent: nothing read yet, or a shell): tokens, dollars, context in use. */
  readonly cost?: SessionCost;
}

/** A session's cost in a list: total tokens, dollars (null: some or all unpriced), context % and whether it is near the limit. */
export interface SessionCost {
  readonly tokens: number;
  readonly usd: number;
  readonly unpriced: readonly string[];
  readonly contextPercent: number | null;
  readonly nearLimit: boolean;
}

function costOf(s: SessionState): SessionCost | null {
  const u = usageView(s.harness, s.usage);
  if ('none' in u || u.total.responses === 0) return null;
  const t = u.total;
  return { tokens: t.input + t.output + t.cacheRead + t.cacheWrite, usd: t.usd, unpriced: t.unpriced, contextPercent: u.context?.percent ?? null, nearLimit: u.context?.nearLimit ?? false };
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
    ...(() => {
      const cost = costOf(s);
      return cost ? { cost } : {};
    })(),
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
