import { describe, expect, it } from 'vitest';
import { evolveSession, foldSession } from '../projections/session.js';
import { decideSession } from './decide-session.js';
import type { SessionCommand } from './session-commands.js';
import type { SessionEvent } from './session-events.js';

const at = '2026-03-01T10:00:00.000Z';
const by = 'ann';
const e = (clock: number, type: SessionEvent['type'], data: object, source: SessionEvent['source'] = 'user'): SessionEvent =>
  ({ v: 1, type, at, by, clock, source, data }) as SessionEvent;
const cmd = (c: object, source: SessionEvent['source'] = 'user') => ({ by, at, source, ...c }) as SessionCommand;
const spawned = e(1, 'spawned', { harness: 'claude', task: 'Fix it', nodes: [], issue: null, base: 'b'.repeat(40), branch: 'trellis/s1', worktree: '/w/s1' });
const waiting = [spawned, e(2, 'starting', {}, 'supervisor'), e(3, 'launched', { tmuxSession: 's1', pane: '%1' }, 'supervisor'), e(4, 'awaiting', { reason: 'turn-end' }, 'hook')];

describe('awaiting{budget} (issue 42)', () => {
  const apply = (state: ReturnType<typeof foldSession>, c: SessionCommand) => decideSession(state, c).reduce(evolveSession, state);

  it('only a person moves a session held at its budget: the stopped agent’s last signals and its exit change nothing; resume and close are accepted', () => {
    const held = apply(foldSession('s1', waiting), cmd({ type: 'await', reason: 'budget', detail: 'the session has cost $0.03' }, 'supervisor'));
    expect(held).toMatchObject({ status: 'awaiting', reason: 'budget', source: 'supervisor' });
    expect(decideSession(held, cmd({ type: 'await', reason: 'turn-end' }, 'hook'))).toEqual([]);
    expect(decideSession(held, cmd({ type: 'busy' }, 'hook'))).toEqual([]);
    expect(decideSession(held, cmd({ type: 'idle' }, 'hook'))).toEqual([]);
    expect(decideSession(held, cmd({ type: 'interrupt', reason: 'process-exit' }, 'process'))).toEqual([]);
    expect(apply(held, cmd({ type: 'resume' }))).toMatchObject({ status: 'starting', reason: null });
    expect(apply(held, cmd({ type: 'close', wip: null }))).toMatchObject({ status: 'closed' });
  });
});
