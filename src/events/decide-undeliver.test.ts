import { describe, expect, it } from 'vitest';
import { evolveSession, foldSession } from '../projections/session.js';
import { decideSession } from './decide-session.js';
import type { SessionCommand } from './session-commands.js';
import type { SessionEvent } from './session-events.js';

/*
 * A prompt the pane did not take (no input box on screen, someone's text in it) is held again, never lost
 * (issue 41 item 5): `undeliver` puts it back on hold with why, and the wait its typing answered back.
 */

const at = '2026-03-01T10:00:00.000Z';
const by = 'ann';
const e = (clock: number, type: SessionEvent['type'], data: object, source: SessionEvent['source'] = 'user'): SessionEvent =>
  ({ v: 1, type, at, by, clock, source, data }) as SessionEvent;
const spawned = e(1, 'spawned', { harness: 'claude', task: 'Fix it', nodes: [], issue: null, base: 'b'.repeat(40), branch: 'trellis/s1', worktree: '/w/s1' });
const histories = {
  'awaiting{turn-end}': [spawned, e(2, 'starting', {}), e(3, 'launched', { tmuxSession: 's1', pane: '%1' }), e(4, 'awaiting', { reason: 'turn-end' }, 'hook')],
};
const cmd = (c: object, source: SessionEvent['source'] = 'user') => ({ by, at, source, ...c }) as SessionCommand;
const apply = (state: ReturnType<typeof foldSession>, c: SessionCommand) => decideSession(state, c).reduce(evolveSession, state);

describe('a prompt the pane did not take', () => {
  it('a prompt the pane did not take is held again, saying why, with the wait its typing answered back; the same reason twice appends nothing', () => {
    const atTurnEnd = foldSession('s1', histories['awaiting{turn-end}']);
    const typed = apply(atTurnEnd, cmd({ type: 'prompt', body: 'again' }));
    expect(typed).toMatchObject({ status: 'running', pending: [] });
    const undeliver = cmd({ type: 'undeliver', index: 0, reason: 'no input box on screen', waiting: 'turn-end' }, 'supervisor');
    const events = decideSession(typed, undeliver);
    expect(events.map((ev) => [ev.type, ev.data])).toEqual([
      ['undelivered', { index: 0, reason: "no input box on screen; held: it is typed once the agent's input box is empty" }],
      ['awaiting', { reason: 'turn-end', idle: true }],
    ]);
    const held = events.reduce(evolveSession, typed);
    expect(held).toMatchObject({ status: 'awaiting', reason: 'turn-end', pending: [0], timeline: [{ body: 'again', held: expect.stringMatching(/^no input box on screen; held/) }] });
    expect(held.turnFailures).toBe(typed.turnFailures);
    // Renewed with the same reason: nothing; the next wait for input delivers it.
    expect(decideSession(held, undeliver)).toEqual([]);
    expect(decideSession(held, cmd({ type: 'deliver' }, 'supervisor')).map((ev) => ev.type)).toEqual(['delivered', 'running']);
    // An agent that moved on meanwhile (a hook said it waits on a dialog) keeps that wait.
    const dialog = apply(typed, cmd({ type: 'await', reason: 'permission' }, 'hook'));
    expect(decideSession(dialog, undeliver).map((ev) => ev.type)).toEqual(['undelivered']);
  });

});
