import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../events/index.js';
import { foldSession } from './session.js';
import { QUARANTINE_AFTER, quarantineDue, SUPERVISED_STATUSES } from './session-quarantine.js';

const at = '2026-03-01T10:00:00.000Z';
const e = (clock: number, type: SessionEvent['type'], data: object, source: SessionEvent['source'] = 'hook'): SessionEvent =>
  ({ v: 1, type, at, by: 'ann', clock, source, data }) as SessionEvent;

const spawnData = { harness: 'shell', task: 'Fix the login', nodes: [], issue: null, base: 'b'.repeat(40), branch: 'trellis/s1', worktree: '/w/s1' };
const running = [e(1, 'spawned', spawnData, 'user'), e(2, 'starting', {}, 'supervisor'), e(3, 'launched', { tmuxSession: 's1', pane: '%1' }, 'supervisor')];
/** `n` failed turns after `log`, from the next clock on. */
const fails = (log: SessionEvent[], n: number): SessionEvent[] => [...log, ...Array.from({ length: n }, (_, i) => e(log.length + 1 + i, 'turn-failed', { reason: `server_error ${i}` }))];
const then = (log: SessionEvent[], type: SessionEvent['type'], data: object = {}, source: SessionEvent['source'] = 'hook'): SessionEvent[] => [...log, e(log.length + 1, type, data, source)];

/** Given a session's log, then: the reason its quarantine records, or null when it must not be quarantined. */
const table: [string, SessionEvent[], string | null][] = [
  ['running, no failed turn', running, null],
  ['running, two failed turns in a row', fails(running, 2), null],
  ['running, three failed turns in a row', fails(running, 3), '3 turn failures in a row'],
  ['running, four failed turns in a row', fails(running, 4), '4 turn failures in a row'],
  ['awaiting its input after the third failed turn', then(fails(running, 3), 'awaiting', { reason: 'turn-end', detail: 'the turn failed' }), '3 turn failures in a row'],
  ['in review with three failed turns', then(fails(running, 3), 'review-requested', {}, 'user'), '3 turn failures in a row'],
  ['merging with three failed turns', then(then(fails(running, 3), 'review-requested', {}, 'user'), 'merge-dispatched', {}, 'user'), '3 turn failures in a row'],
  ['two failed turns, a turn that ends well, two more', fails(then(then(fails(running, 2), 'running'), 'awaiting', { reason: 'turn-end' }), 2), null],
  ['interrupted after three failed turns (no live agent)', then(fails(running, 3), 'interrupted', { reason: 'by-user' }, 'user'), null],
  ['already quarantined', then(fails(running, 3), 'quarantined', { reason: '3 turn failures in a row', wip: null }, 'supervisor'), null],
  ['resumed from its quarantine: the count starts over', then(then(fails(running, 3), 'quarantined', { reason: 'x', wip: null }, 'supervisor'), 'resumed', {}, 'user'), null],
  ['closed after three failed turns', then(fails(running, 3), 'closed', { wip: null }, 'user'), null],
];

describe('quarantineDue: given a session’s log, whether it must be quarantined and why', () => {
  it.each(table)('given %s', (_given, log, reason) => {
    expect(quarantineDue(foldSession('s1', log))).toBe(reason);
  });

  it('a session never logged (absent) is not quarantined', () => {
    expect(quarantineDue({ status: 'absent', turnFailures: QUARANTINE_AFTER })).toBeNull();
  });

  it('only the statuses with a live agent in its pane quarantine', () => {
    expect([...SUPERVISED_STATUSES].sort()).toEqual(['awaiting', 'merging', 'review', 'running']);
  });
});
