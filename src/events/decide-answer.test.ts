import { describe, expect, it } from 'vitest';
import { evolveSession, foldSession } from '../projections/session.js';
import { decideSession } from './decide-session.js';
import type { SessionCommand } from './session-commands.js';
import { parseSessionEvent, type SessionEvent } from './session-events.js';

const at = '2026-03-01T10:00:00.000Z';
const by = 'ann';
const e = (clock: number, type: SessionEvent['type'], data: object, source: SessionEvent['source'] = 'user'): SessionEvent =>
  ({ v: 1, type, at, by, clock, source, data }) as SessionEvent;
const spawned = e(1, 'spawned', { harness: 'claude', task: 'Fix the login', nodes: [], issue: null, base: 'b'.repeat(40), branch: 'trellis/s1', worktree: '/w/s1' });
const histories = {
  'awaiting{permission}': [spawned, e(2, 'starting', {}), e(3, 'launched', { tmuxSession: 's1', pane: '%1' }), e(4, 'awaiting', { reason: 'permission' }, 'hook')],
  closed: [spawned, e(2, 'starting', {}), e(3, 'launched', { tmuxSession: 's1', pane: '%1' }), e(4, 'closed', { wip: null })],
};
const cmd = (c: object, source: SessionEvent['source'] = 'user') => ({ by, at, source, ...c }) as SessionCommand;

describe('an answer that took (issue 43)', () => {
  it('is recorded as a fact in any status: the option, the channel, who (`by`) and when, folded as the latest answer and read back from its stored form', () => {
    const state = foldSession('s1', histories['awaiting{permission}']);
    const [answered] = decideSession(state, cmd({ type: 'answer', option: 'Yes', via: 'the page' }));
    expect(answered).toMatchObject({ type: 'answered', by, at, source: 'user', data: { option: 'Yes', via: 'the page' } });
    const folded = evolveSession(state, answered!);
    expect(folded.answered).toEqual({ option: 'Yes', by, via: 'the page', at });
    // The fact moves no status: the agent's next state is its own event.
    expect(folded.status).toBe('awaiting');
    expect(parseSessionEvent(JSON.stringify(answered))).toEqual({ ok: true, event: answered });
    expect(parseSessionEvent(JSON.stringify({ ...answered, data: { option: 'Yes' } }))).toMatchObject({ ok: false });
    expect(() => decideSession(state, cmd({ type: 'answer', option: ' ', via: 'the CLI' }))).toThrow(/an answer names its option/);
    expect(decideSession(foldSession('s1', histories.closed), cmd({ type: 'answer', option: 'No', via: 'ntfy' }))).toMatchObject([{ type: 'answered' }]);
  });
});
