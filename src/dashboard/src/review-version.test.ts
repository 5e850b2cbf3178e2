import { describe, expect, it } from 'vitest';
import type { SessionEvent } from '../../events/index.js';
import { foldSession, sessionView } from '../../projections/index.js';
import { reviewVersion } from './review-version';

const at = '2026-03-01T10:00:00.000Z';
const e = (clock: number, type: SessionEvent['type'], data: object, source: SessionEvent['source'] = 'hook'): SessionEvent => ({ v: 1, type, at, by: 'ann', clock, source, data }) as SessionEvent;
const spawnData = { harness: 'shell', task: 'Fix the cart', nodes: ['shop/cart'], issue: null, base: 'b'.repeat(40), branch: 'trellis/s1', worktree: '/w/s1' };
const running = [e(1, 'spawned', spawnData, 'user'), e(2, 'starting', {}, 'supervisor'), e(3, 'launched', { tmuxSession: 's1', pane: '%1' }, 'supervisor')];
const then = (log: SessionEvent[], type: SessionEvent['type'], data: object = {}, source: SessionEvent['source'] = 'hook'): SessionEvent[] => [...log, e(log.length + 1, type, data, source)];
const version = (log: SessionEvent[]) => reviewVersion(sessionView(foldSession('s1', log)));

describe('reviewVersion: what an open session page reads its review bundle again on', () => {
  it('moves when a person accepts a changed check (from the CLI or the API, not only from the page itself)', () => {
    const inReview = then(running, 'review-requested', {}, 'user');
    const accepted = then(inReview, 'check-accepted', { reason: 'the total moved on purpose', scenarios: [{ id: 'cart/total', node: 'shop/cart', run: 'true', timeoutS: null }] }, 'user');
    expect(version(accepted)).not.toBe(version(inReview));
  });

  it('moves on a merge override and on a new phase; an agent hook event at work moves it not', () => {
    const waiting = then(running, 'awaiting', { reason: 'permission' });
    expect(version(waiting)).toBe(version(running));
    expect(version(then(running, 'review-requested', {}, 'user'))).not.toBe(version(running));
    const inReview = then(running, 'review-requested', {}, 'user');
    expect(version(then(inReview, 'merge-overridden', { reason: 'flaky', scenarios: ['cart/total'] }, 'user'))).not.toBe(version(inReview));
  });
});
