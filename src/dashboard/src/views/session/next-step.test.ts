import { describe, expect, it } from 'vitest';
import { actionsFor, nextStep, type BundleFacts } from './actions';

const ready: BundleFacts = { merged: false, ready: true, conflicts: false, byHand: true };
const step = (state: string, b: BundleFacts | null, extra: { harness?: string; reason?: string | null; issue?: string | null; may?: (r: string) => boolean } = {}) => {
  const s = { state, harness: extra.harness ?? 'shell', reason: extra.reason ?? null, issue: extra.issue ?? null };
  return nextStep(s as never, actionsFor(s as never, extra.may ?? (() => true), b?.merged ?? false), b, true);
};

describe('the session page’s one next step', () => {
  it('follows the day: checks, review, merge by hand, close the issue', () => {
    expect(step('running', null)).toEqual({ kind: 'verb', verb: 'check' });
    expect(step('running', { ...ready, ready: false })).toEqual({ kind: 'verb', verb: 'check' });
    expect(step('running', ready)).toEqual({ kind: 'verb', verb: 'review' });
    expect(step('review', ready)).toEqual({ kind: 'merge-by-hand' });
    expect(step('review', ready, { harness: 'claude' })).toEqual({ kind: 'verb', verb: 'merge' });
    expect(step('review', { ...ready, merged: true }, { issue: 'i1' })).toEqual({ kind: 'close-issue' });
    expect(step('review', { ...ready, merged: true })).toEqual({ kind: 'verb', verb: 'close' });
  });
  it('a conflict is cleared first; a stopped session resumes; a dialog is answered', () => {
    expect(step('review', { ...ready, conflicts: true })).toEqual({ kind: 'bring-trunk-in' });
    expect(step('starting', { ...ready, conflicts: true }, { harness: 'claude' })).toEqual({ kind: 'bring-trunk-in' });
    expect(step('interrupted', ready)).toEqual({ kind: 'verb', verb: 'resume' });
    expect(step('awaiting', ready, { reason: 'permission', harness: 'claude' })).toEqual({ kind: 'answer' });
  });
  it('never offers what this login may not do: it says why instead', () => {
    expect(step('review', ready, { harness: 'claude', may: (r) => !r.endsWith('/merge') })).toEqual({ kind: 'wait', why: 'Ready to merge; this login may not merge.' });
    expect(step('running', null, { may: () => false })).toEqual({ kind: 'wait', why: 'Running the checks needs a login that may run commands.' });
  });
});
