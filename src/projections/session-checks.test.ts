import { describe, expect, it } from 'vitest';
import type { Outcome, Reading } from '../events/index.js';
import type { EvalState } from './eval-readings.js';
import { issueChecks, withChecks } from './issue-checks.js';
import { sessionChecks, verdictOf, type ChecksInput } from './session-checks.js';

const HEAD = 'a'.repeat(40);
const OLD = 'b'.repeat(40);
let n = 0;
const reading = (scenario: string, scope: string, outcome: Outcome, commit: string | null = HEAD): Reading => ({
  id: `r${++n}`,
  scenario,
  scope,
  commit,
  outcome,
  durationMs: 1,
  output: null,
  by: 'x',
  at: `2026-01-01T00:00:${String(n).padStart(2, '0')}.000Z`,
});
const stream = (scenario: string, readings: Reading[]): EvalState => ({ key: scenario.replace('/', '+'), scenario, clock: readings.length, lastAt: '', readings });
const decl = (id: string, node: string) => ({ id, run: `check ${id}`, timeoutS: 600, node });
const input = (over: Partial<ChecksInput>): ChecksInput => ({ session: 's1', head: HEAD, linked: [], changed: [], issue: [], own: [], trunk: [], streams: [], gate: 'checks', overrides: [], ...over });

describe('verdictOf: the session’s reading at its head against trunk’s latest', () => {
  it.each([
    ['pass', 'pass', 'pass'],
    ['pass', 'fail', 'fixed'],
    ['pass', 'error', 'fixed'],
    ['fail', 'pass', 'regressed'],
    ['error', 'pass', 'regressed'],
    ['fail', 'fail', 'still failing'],
    ['pass', null, 'new'],
    ['fail', null, 'new'],
    [null, 'pass', 'unmeasured'],
    [null, null, 'unmeasured'],
  ] as const)('here %s, trunk %s: %s', (here, trunk, verdict) => {
    expect(verdictOf(here ? reading('a/b', 's1', here) : null, trunk ? reading('a/b', 'trunk', trunk) : null)).toBe(verdict);
  });
});

describe('sessionChecks: which scenarios concern a session, and the gate', () => {
  it('linked nodes, changed nodes (its own tree or trunk’s) and its issue’s checks; others are not its checks', () => {
    const c = sessionChecks(
      input({
        linked: ['shop/cart'],
        changed: ['shop/new'],
        issue: ['pay/ok', 'nowhere/declared'],
        own: [decl('cart/total', 'shop/cart'), decl('new/one', 'shop/new')],
        trunk: [decl('cart/total', 'shop/cart'), decl('pay/ok', 'pay'), decl('other/x', 'other')],
      }),
    );
    expect(c.checks.map((x) => [x.scenario, x.because, x.node])).toEqual([
      ['cart/total', ['linked'], 'shop/cart'],
      ['new/one', ['changed'], 'shop/new'],
      ['nowhere/declared', ['issue'], null],
      ['pay/ok', ['issue'], 'pay'],
    ]);
  });

  it('a reading at an older commit or in another scope is not a reading at the head; regressed and unmeasured block', () => {
    const streams = [
      stream('a/one', [reading('a/one', 'trunk', 'pass'), reading('a/one', 's1', 'pass', OLD), reading('a/one', 's2', 'pass')]),
      stream('a/two', [reading('a/two', 'trunk', 'pass'), reading('a/two', 's1', 'fail')]),
      stream('a/three', [reading('a/three', 'trunk', 'fail'), reading('a/three', 's1', 'fail'), reading('a/three', 's1', 'pass')]),
    ];
    const own = [decl('a/one', 'a'), decl('a/two', 'a'), decl('a/three', 'a')];
    const c = sessionChecks(input({ linked: ['a'], own, streams }));
    expect(c.checks.map((x) => [x.scenario, x.verdict])).toEqual([
      ['a/one', 'unmeasured'],
      ['a/three', 'fixed'],
      ['a/two', 'regressed'],
    ]);
    expect(c).toMatchObject({ ready: false, blocking: ['a/one', 'a/two'], measure: 'trellis session check s1' });
    expect(c.line).toBe("checks: blocked (regressed: a/two; not measured at the head commit: a/one); measure with 'trellis session check s1', or override: trellis session merge s1 --override <reason>");
    expect(sessionChecks(input({ linked: ['a'], own, streams, gate: 'off' }))).toMatchObject({ ready: true, blocking: [] });
    expect(sessionChecks(input({})).line).toBe('checks: ready to merge (no scenario concerns this session)');
  });
});

describe('an issue’s checks: line', () => {
  it('reads inline and list forms, once each; refuses a non-id; withChecks writes what issueChecks reads', () => {
    expect(issueChecks('Fix it.\n\nchecks: a/b, c/d\n\nChecks:\n- e/f\n- a/b\nmore')).toEqual({ checks: ['a/b', 'c/d', 'e/f'] });
    expect(issueChecks('checks: a/b, not..an/id').problem).toMatch(/'not..an\/id'/);
    expect(issueChecks(withChecks('body', ['x/y', 'z']))).toEqual({ checks: ['x/y', 'z'] });
    expect(withChecks('', ['x/y'])).toBe('checks: x/y\n');
    expect(withChecks('b', [])).toBe('b');
  });
});
