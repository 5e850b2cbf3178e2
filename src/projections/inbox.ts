import { LIVE_STATUSES } from '../events/session-commands.js';
import type { SessionSummary } from './session-list.js';

/**
 * The inbox: every session that needs a person, and what for. Pure, so the host (across projects, from
 * each backend's board) and a project's own page (from its board) decide it the same way.
 *   awaiting{permission|question|setup|auth|turn-end|…}  the agent waits on a person (any sub-reason)
 *   a failed turn (turnFailures)                         the agent reported a failed turn
 *   failed{reason}                                       it could not start
 *   quarantined{reason}                                  held aside, never resumed by itself
 *   finished and unread                                  in review, or interrupted, with output nobody read
 */
export interface InboxEntry {
  readonly session: string;
  readonly title: string;
  readonly state: SessionSummary['state'];
  readonly reason: string | null;
  /** What it waits for, in words: `permission`, `failed: tmux-gone`, `finished, unread`. */
  readonly waitsFor: string;
  /** Since when (its latest transition or output). */
  readonly since: string;
  /** Where one click goes: the terminal for a waiting agent, the review for finished work. */
  readonly goTo: 'terminal' | 'review';
  /** `confined (by …)` or `unconfined (why)`, so a person answering it knows what the agent could reach (absent: not launched). */
  readonly confinement?: string;
}

/** A session's confinement in words: `confined by bubblewrap …`, `unconfined: sessions.confine is "off" …`. */
export const confinementWords = (c: NonNullable<SessionSummary['confinement']>): string => (c.confined ? `confined by ${c.by}` : `unconfined: ${c.why}`);

export function inboxEntry(s: SessionSummary): InboxEntry | null {
  const base = { session: s.id, title: s.title || s.id, state: s.state, reason: s.reason, since: s.updatedAt, ...(s.confinement ? { confinement: confinementWords(s.confinement) } : {}) };
  // A failed turn needs a look whatever state the agent went on in (the supervisor quarantines repeats).
  if (s.turnFailures && (s.state === 'running' || s.state === 'awaiting' || s.state === 'merging' || s.state === 'starting')) {
    return { ...base, waitsFor: s.turnFailures > 1 ? `${s.turnFailures} failed turns in a row` : 'a failed turn', goTo: 'terminal' };
  }
  if (s.state === 'awaiting') return { ...base, waitsFor: s.reason ?? 'input', goTo: 'terminal' };
  if (s.state === 'failed' || s.state === 'quarantined') return { ...base, waitsFor: s.reason ? `${s.state}: ${s.reason}` : s.state, goTo: 'terminal' };
  if (s.unread && (s.state === 'review' || s.state === 'interrupted')) return { ...base, waitsFor: s.state === 'review' ? 'finished, unread' : `stopped (${s.reason ?? 'interrupted'}), unread`, goTo: 'review' };
  return null;
}

/** The inbox of one board's sessions, longest waiting first. */
export function inboxOf(sessions: readonly SessionSummary[]): InboxEntry[] {
  return sessions
    .map(inboxEntry)
    .filter((e): e is InboxEntry => e !== null)
    .sort((a, b) => (a.since < b.since ? -1 : a.since > b.since ? 1 : 0));
}

/** Sessions that hold a slot of the budget now: what "live sessions" counts everywhere. */
export const liveSessionCount = (sessions: readonly Pick<SessionSummary, 'state'>[]): number => sessions.filter((s) => LIVE_STATUSES.has(s.state)).length;
