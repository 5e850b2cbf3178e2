import { describe, expect, it } from 'vitest';
import { inboxEntry, inboxOf, liveSessionCount } from './inbox.js';
import type { SessionSummary } from './session-list.js';

const s = (over: Partial<SessionSummary>): SessionSummary => ({
  id: 'a1',
  title: 'Task',
  harness: 'claude',
  state: 'running',
  reason: null,
  detail: null,
  source: 'hook',
  unread: false,
  nodes: [],
  issue: null,
  branch: 'trellis/a1',
  updatedAt: '2026-03-01T10:00:00.000Z',
  ...over,
});

describe('the inbox: which sessions need a person, and for what', () => {
  it.each([
    ['awaiting permission', s({ state: 'awaiting', reason: 'permission' }), 'permission', 'terminal'],
    ['awaiting a sub-reason this version does not know', s({ state: 'awaiting', reason: 'setup' }), 'setup', 'terminal'],
    ['a failed turn while it runs on', s({ state: 'running', turnFailures: 1 }), 'a failed turn', 'terminal'],
    ['failed turns in a row', s({ state: 'awaiting', reason: 'turn-end', turnFailures: 2 }), '2 failed turns in a row', 'terminal'],
    ['failed at start-up', s({ state: 'failed', reason: 'tmux refused' }), 'failed: tmux refused', 'terminal'],
    ['quarantined', s({ state: 'quarantined', reason: '3 turn failures' }), 'quarantined: 3 turn failures', 'terminal'],
    ['finished and unread', s({ state: 'review', unread: true }), 'finished, unread', 'review'],
  ] as const)('%s', (_name, session, waitsFor, goTo) => {
    expect(inboxEntry(session)).toMatchObject({ session: 'a1', waitsFor, goTo, since: session.updatedAt });
  });

  it.each([
    ['running', s({})],
    ['in review, read', s({ state: 'review' })],
    ['closed and unread', s({ state: 'closed', unread: true })],
    ['queued', s({ state: 'queued' })],
  ])('%s: not in the inbox', (_name, session) => {
    expect(inboxEntry(session)).toBeNull();
  });

  it('lists the longest waiting first; counts live sessions by state', () => {
    const list = [s({ id: 'new', state: 'awaiting', updatedAt: '2026-03-02T00:00:00.000Z' }), s({ id: 'old', state: 'awaiting', updatedAt: '2026-03-01T00:00:00.000Z' }), s({ id: 'run' })];
    expect(inboxOf(list).map((e) => e.session)).toEqual(['old', 'new']);
    expect(liveSessionCount([...list, s({ state: 'closed' }), s({ state: 'queued' }), s({ state: 'interrupted' })])).toBe(3);
  });
});
