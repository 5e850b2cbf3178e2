import { describe, expect, it } from 'vitest';
import type { SessionView } from '../projections/index.js';
import { transitionLine } from './session-text.js';

const s = (state: string, reason: string | null = null) => ({ id: 's1', state, reason }) as unknown as SessionView;

describe("a transition's answer says each thing once (issue 44)", () => {
  it.each([
    ['close', s('closed'), 'closed', 'closed', 's1 closed'],
    ['interrupt', s('interrupted', 'user'), 'interrupted', 'interrupted', 's1 interrupted (user)'],
    ['quarantine', s('quarantined', 'manual'), 'quarantined', 'quarantined', 's1 quarantined (manual)'],
    ['review', s('review'), 'up for review', 'review', 's1 up for review'],
    ['resume: the state is news', s('running'), 'resumed', undefined, 's1 resumed: running'],
    ['interrupt that did not land there', s('closed'), 'interrupted', 'interrupted', 's1 interrupted: closed'],
  ])('%s', (_what, view, done, lands, line) => {
    expect(transitionLine(view, done, lands)).toBe(line);
  });
});
