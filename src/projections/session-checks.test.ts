import { describe, expect, it } from 'vitest';
import type { Outcome, Reading } from '../events/index.js';
import type { EvalState } from './eval-readings.js';
import { issueChecks, withChecks } from './issue-checks.js';
import { sessionChecks, verdictOf, type ChecksInput } from './session-checks.js';

const HEAD = 'a'.repeat(40);
const OLD = 'b'.repeat(40);
let n = 0;
const TIP = 'c'.repeat(40);
const reading = (scenario: string, scope: string, outcome: Outcome, commit: string | null = scope === 'trunk' ? TIP : HEAD, run: string | null = `check ${scenario}`): Reading => ({
  id: `r${++n}`,
  scenario,
  scope,
  commit,
  outcome,
  durationMs: 1,
  output: null,
  by: 'x',
  at: `2026-01-01T00:00:${String(n).padStart(2, '0')}.000Z`,
  ...(run !== null ? { run } : {}),
});
const stream = (scenario: string, readings: Reading[]): EvalState => ({ key: scenario.replace('/', '+'), scenario, clock: readings.length, lastAt: '', readings });
const decl = (id: string, node: string) => ({ id, run: `check ${id}`, timeoutS: 600, node });
const input = (over: Partial<ChecksInput>): ChecksInput => ({ session: 's1', head: HEAD, linked: [], changed: [], issue: [], own: [], trunk: [], trunkTip: TIP, streams: [], gate: 'checks', overrides: [], ...over });

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
    const c = sessionChecks(input({ linked: ['a'], own, trunk: own, streams }));
    expect(c.checks.map((x) => [x.scenario, x.verdict])).toEqual([
      ['a/one', 'unmeasured'],
      ['a/three', 'fixed'],
      ['a/two', 'regressed'],
    ]);
    expect(c).toMatchObject({ ready: false, blocking: ['a/one', 'a/two'], measure: 'trellis session check s1' });
    expect(c.line).toBe("checks: blocked (regressed: a/two; not measured at the head commit: a/one); measure with 'trellis session check s1', or override: trellis session merge s1 --override <reason>");
    expect(sessionChecks(input({ linked: ['a'], own, trunk: own, streams, gate: 'off' }))).toMatchObject({ ready: true, blocking: [] });
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

describe('the gate cannot be fooled (DESIGN.md §14): each hole, as a row', () => {
  const FIXED = { base: 'd'.repeat(40), scenarios: [{ id: 'a/one', node: 'a', run: 'check a/one', timeoutS: 600 }] };
  const at = (d: { id: string; run: string; node: string; timeoutS: number }) => d;
  type Row = { name: string; given: Partial<ChecksInput>; verdict: string; blocks: RegExp | null };
  const rows: Row[] = [
    {
      name: 'the branch rewrote the run: line to `true`, and its own run passes: changed, blocking; the fixed definition failed',
      given: {
        own: [at({ ...decl('a/one', 'a'), run: 'true' })],
        streams: [stream('a/one', [reading('a/one', 'trunk', 'pass'), reading('a/one', 's1', 'pass', HEAD, 'true'), reading('a/one', 's1', 'fail')])],
      },
      verdict: 'changed',
      blocks: /^changed: the branch redefined the check fixed at dispatch/,
    },
    {
      name: 'the branch removed the declaration: changed, blocking',
      given: { own: [], streams: [stream('a/one', [reading('a/one', 'trunk', 'pass'), reading('a/one', 's1', 'pass')])] },
      verdict: 'changed',
      blocks: /^changed: the branch removed/,
    },
    {
      name: 'a reading of the head’s own (rewritten) definition is not a reading of the fixed one',
      given: { own: [decl('a/one', 'a')], streams: [stream('a/one', [reading('a/one', 'trunk', 'pass'), reading('a/one', 's1', 'pass', HEAD, 'true')])] },
      verdict: 'unmeasured',
      blocks: /^not measured at aaaaaaaaaaaa/,
    },
    {
      name: 'trunk’s latest reading is an old fail and trunk was never measured at its tip: unmeasured, never still failing',
      given: { own: [decl('a/one', 'a')], streams: [stream('a/one', [reading('a/one', 'trunk', 'fail', OLD), reading('a/one', 's1', 'fail')])] },
      verdict: 'unmeasured',
      blocks: /^trunk not measured at its tip cccccccccccc \(its latest reading is at bbbbbbbbbbbb\)/,
    },
    {
      name: 'trunk measured at its tip passes: the same fail at the head is regressed',
      given: { own: [decl('a/one', 'a')], streams: [stream('a/one', [reading('a/one', 'trunk', 'fail', OLD), reading('a/one', 'trunk', 'pass'), reading('a/one', 's1', 'fail')])] },
      verdict: 'regressed',
      blocks: /^regressed: passes on trunk, fail at aaaaaaaaaaaa/,
    },
    {
      name: 'a trunk reading at the tip filed from outside (no run: anyone can file one) is no baseline',
      given: { own: [decl('a/one', 'a')], streams: [stream('a/one', [reading('a/one', 'trunk', 'pass', OLD), reading('a/one', 'trunk', 'fail', TIP, null), reading('a/one', 's1', 'fail')])] },
      verdict: 'unmeasured',
      blocks: /^trunk not measured at its tip cccccccccccc by Trellis \(its reading there was filed from outside\)$/,
    },
    {
      name: 'a required (issue) check still failing blocks',
      given: { issue: ['a/one'], linked: [], own: [decl('a/one', 'a')], streams: [stream('a/one', [reading('a/one', 'trunk', 'fail'), reading('a/one', 's1', 'fail')])] },
      verdict: 'still failing',
      blocks: /^required by the issue and fail at aaaaaaaaaaaa/,
    },
    {
      name: 'the same check still failing but only linked does not block',
      given: { own: [decl('a/one', 'a')], streams: [stream('a/one', [reading('a/one', 'trunk', 'fail'), reading('a/one', 's1', 'fail')])] },
      verdict: 'still failing',
      blocks: null,
    },
    {
      name: 'a scenario the branch adds is new and does not block, measured or not',
      given: { own: [decl('a/one', 'a'), decl('a/two', 'a')], streams: [stream('a/one', [reading('a/one', 'trunk', 'pass'), reading('a/one', 's1', 'pass')])] },
      verdict: 'pass',
      blocks: null,
    },
    {
      name: 'a definition trunk itself moved to since dispatch (the branch brought trunk in) is not the branch’s change',
      given: {
        own: [at({ ...decl('a/one', 'a'), run: 'check a/one v2' })],
        trunk: [at({ ...decl('a/one', 'a'), run: 'check a/one v2' })],
        streams: [stream('a/one', [reading('a/one', 'trunk', 'pass', TIP, 'check a/one v2'), reading('a/one', 's1', 'pass', HEAD, 'check a/one v2')])],
      },
      verdict: 'pass',
      blocks: null,
    },
  ];
  it.each(rows)('$name', ({ given, verdict, blocks }) => {
    const c = sessionChecks(input({ linked: ['a'], fixed: FIXED, trunk: [decl('a/one', 'a')], ...given }));
    const one = c.checks.find((x) => x.scenario === 'a/one')!;
    expect(one.verdict).toBe(verdict);
    if (blocks) expect(one.blocks).toMatch(blocks);
    else expect(one.blocks).toBeNull();
    expect(c.ready).toBe(blocks === null && c.checks.every((x) => x.blocks === null));
    const two = c.checks.find((x) => x.scenario === 'a/two');
    if (two) expect(two).toMatchObject({ verdict: 'new', blocks: null });
  });

  it('the gate never pairs ready with failing without saying why: not required, failing on trunk too; new and failing here', () => {
    const still = sessionChecks(input({ linked: ['a'], fixed: FIXED, trunk: [decl('a/one', 'a')], own: [decl('a/one', 'a')], streams: [stream('a/one', [reading('a/one', 'trunk', 'fail'), reading('a/one', 's1', 'fail')])] }));
    expect(still.ready).toBe(true);
    expect(still.line).toBe('checks: ready to merge (1 still failing (it fails on trunk too and the issue does not require it, so not blocking))');
    const added = sessionChecks(
      input({
        linked: ['a'],
        fixed: FIXED,
        trunk: [decl('a/one', 'a')],
        own: [decl('a/one', 'a'), decl('a/two', 'a')],
        streams: [stream('a/one', [reading('a/one', 'trunk', 'pass'), reading('a/one', 's1', 'pass')]), stream('a/two', [reading('a/two', 's1', 'fail')])],
      }),
    );
    expect(added.ready).toBe(true);
    expect(added.line).toBe('checks: ready to merge (1 pass, 1 new (1 failing here; not on trunk to compare with and not required, so not blocking))');
  });

  it('a changed check shows both definitions and both results; once a person accepts the new one, the gate runs it', () => {
    const own = [at({ ...decl('a/one', 'a'), run: 'true' })];
    const streams = [stream('a/one', [reading('a/one', 'trunk', 'pass'), reading('a/one', 's1', 'fail'), reading('a/one', 's1', 'pass', HEAD, 'true')])];
    const before = sessionChecks(input({ linked: ['a'], fixed: FIXED, trunk: [decl('a/one', 'a')], own, streams }));
    expect(before.checks[0]!.changed).toMatchObject({ fixed: { run: 'check a/one' }, now: { run: 'true' }, headNow: { outcome: 'pass' }, accepted: null });
    expect(before.checks[0]!.head).toMatchObject({ outcome: 'fail', run: 'check a/one' });
    expect(before.line).toContain('changed since dispatch: a/one');
    expect(before.line).toContain('trellis session accept s1 --reason <why>');
    const acceptances = [{ by: 'ana', at: 'x', reason: 'the old check tested the wrong file', scenarios: [{ id: 'a/one', node: 'a', run: 'true', timeoutS: 600 }] }];
    const after = sessionChecks(input({ linked: ['a'], fixed: FIXED, trunk: [decl('a/one', 'a')], own, streams, acceptances }));
    expect(after.checks[0]).toMatchObject({ run: 'true', verdict: 'pass', blocks: null, changed: { accepted: { by: 'ana' } } });
    expect(after.ready).toBe(true);
    // An acceptance of another definition accepts nothing.
    const other = sessionChecks(input({ linked: ['a'], fixed: FIXED, trunk: [decl('a/one', 'a')], own: [at({ ...decl('a/one', 'a'), run: 'exit 0' })], streams, acceptances }));
    expect(other.checks[0]).toMatchObject({ verdict: 'changed', changed: { accepted: null } });
  });
});
