import { describe, expect, it } from 'vitest';
import { foldSession, initialSession } from '../projections/session.js';
import { decideSession } from './decide-session.js';
import type { SessionCommand } from './session-commands.js';
import { describeSessionEvent, parseSessionEvent, type SessionEvent } from './session-events.js';

/* A session's checks fixed at dispatch and a person's acceptance of a changed one (DESIGN.md §14), as events. */

const at = '2026-03-01T10:00:00.000Z';
const by = 'ann';
const e = (clock: number, type: SessionEvent['type'], data: object): SessionEvent => ({ v: 1, type, at, by, clock, source: 'user', data }) as SessionEvent;
const cmd = (c: object) => ({ by, at, source: 'user', ...c }) as SessionCommand;
const spawnData = { harness: 'shell', task: 'Fix it', nodes: [], issue: null, base: 'b'.repeat(40), branch: 'trellis/s1', worktree: '/w/s1' };
const histories = {
  queued: [e(1, 'spawned', spawnData)],
  review: [e(1, 'spawned', spawnData), e(2, 'starting', {}), e(3, 'launched', { tmuxSession: 's1', pane: '%1' }), e(4, 'review-requested', {})],
};

describe('checks fixed at dispatch', () => {
  const fixed = { base: 'f'.repeat(40), scenarios: [{ id: 'a/b', node: 'a', run: 'grep -q ok f', timeoutS: 600 }], issueChecks: ['a/b'] };
  it('given a spawned session, when its checks are fixed, then the fold keeps them, the subject says so, and they are never fixed again', () => {
    const [event] = decideSession(foldSession('s1', histories.queued), cmd({ type: 'fix-checks', ...fixed }));
    expect(event).toMatchObject({ type: 'checks-fixed', data: fixed });
    expect(parseSessionEvent(JSON.stringify(event))).toEqual({ ok: true, event });
    expect(describeSessionEvent(event!)).toBe('checks fixed at ffffffffffff: 1 declared scenario(s), issue checks a/b');
    const state = foldSession('s1', [...histories.queued, event!]);
    expect(state.fixedChecks).toEqual(fixed);
    expect(() => decideSession(state, cmd({ type: 'fix-checks', ...fixed, scenarios: [] }))).toThrow(/fixed at dispatch and are not fixed again/);
  });

  it('a spawn that carries its checks logs them with it, in the same append', () => {
    const events = decideSession(initialSession('s1'), cmd({ type: 'spawn', ...spawnData, checks: fixed }));
    expect(events.map((x) => [x.type, x.clock])).toEqual([
      ['spawned', 1],
      ['checks-fixed', 2],
    ]);
    expect(foldSession('s1', events)).toMatchObject({ status: 'queued', fixedChecks: fixed });
  });

  it('an acceptance names who, why and the definitions, and needs a reason', () => {
    const accepted = { id: 'a/b', node: 'a', run: null, timeoutS: null };
    const [event] = decideSession(foldSession('s1', histories.review), cmd({ type: 'accept-check', reason: ' removed on purpose ', scenarios: [accepted] }));
    expect(describeSessionEvent(event!)).toBe(`changed check accepted by ${by} for a/b (removed): removed on purpose`);
    expect(foldSession('s1', [...histories.review, event!]).checkAcceptances).toEqual([{ by, at, reason: 'removed on purpose', scenarios: [accepted] }]);
    expect(() => decideSession(foldSession('s1', histories.review), cmd({ type: 'accept-check', reason: ' ', scenarios: [accepted] }))).toThrow(/needs a reason/);
    expect(parseSessionEvent(JSON.stringify({ ...event, data: { reason: 'x', scenarios: [] } }))).toMatchObject({ ok: false, reason: expect.stringContaining('data.scenarios') });
  });
});
