import { describe, expect, it } from 'vitest';
import { foldEval } from '../projections/eval-readings.js';
import { foldThread } from '../projections/thread.js';
import { decideEval, type EvalCommand } from './decide-eval.js';
import type { ErrorCode } from './errors.js';
import { describeEvalEvent, isScenarioId, parseEvalEvent, scenarioKey, scenarioOfKey, type EvalEvent, type Reading } from './eval-events.js';
import { parseThreadEvent } from './thread-events.js';

const at = '2026-03-01T10:00:00.000Z';
const by = 'ann';
const KEY = 'checkout+pays';
const SHA = 'a'.repeat(40);
const OUT = 'b'.repeat(64);
type Data = Omit<Reading, 'by' | 'at'>;
const data = (over: Partial<Data> = {}): Data => ({ id: 'r1', scenario: 'checkout/pays', scope: 'trunk', commit: SHA, outcome: 'pass', durationMs: 12, output: OUT, ...over });
const measured = (clock: number, over: Partial<Data> = {}): EvalEvent => ({ v: 1, type: 'measured', at, by, clock, data: data(over) });
const cmd = (over: Partial<Data> = {}): EvalCommand => ({ type: 'measure', by, at, reading: data(over) });

interface Case {
  name: string;
  given: EvalEvent[];
  when: EvalCommand;
  then: EvalEvent[] | { code: ErrorCode };
}

const cases: Case[] = [
  { name: 'a first reading is measured with clock 1', given: [], when: cmd(), then: [measured(1)] },
  { name: 'a later reading takes the next clock', given: [measured(1)], when: cmd({ id: 'r2', outcome: 'fail' }), then: [measured(2, { id: 'r2', outcome: 'fail' })] },
  { name: 'a score is kept', given: [], when: cmd({ score: 0.75 }), then: [measured(1, { score: 0.75 })] },
  { name: 'a reading without output or commit', given: [], when: cmd({ output: null, commit: null }), then: [measured(1, { output: null, commit: null })] },
  { name: 'a reading in another scope', given: [measured(1)], when: cmd({ id: 'r2', scope: 'sess-1' }), then: [measured(2, { id: 'r2', scope: 'sess-1' })] },
  { name: 'an outcome outside pass|fail|error is refused', given: [], when: cmd({ outcome: 'flaky' as never }), then: { code: 'INVALID_INPUT' } },
  { name: 'a score that is not a number is refused', given: [], when: cmd({ score: Number.NaN }), then: { code: 'INVALID_INPUT' } },
  { name: 'a negative duration is refused', given: [], when: cmd({ durationMs: -1 }), then: { code: 'INVALID_INPUT' } },
  { name: 'an output that is not an evidence hash is refused', given: [], when: cmd({ output: 'nope' }), then: { code: 'INVALID_INPUT' } },
  { name: 'an empty scope is refused', given: [], when: cmd({ scope: ' ' }), then: { code: 'INVALID_INPUT' } },
  { name: 'a reading of another scenario on this stream is refused', given: [], when: cmd({ scenario: 'checkout/other' }), then: { code: 'INVALID_INPUT' } },
  { name: 'a reading id already filed is refused', given: [measured(1)], when: cmd(), then: { code: 'READING_EXISTS' } },
];

describe('decideEval: given readings, when a reading is filed, then events', () => {
  it.each(cases)('$name', ({ given, when, then }) => {
    const state = foldEval(KEY, given);
    if (Array.isArray(then)) expect(decideEval(state, when)).toEqual(then);
    else expect(() => decideEval(state, when)).toThrow(expect.objectContaining({ code: then.code }));
  });

  it('every decided event parses back and folds to exactly the new clock', () => {
    for (const { given, when, then } of cases) {
      if (!Array.isArray(then)) continue;
      const events = decideEval(foldEval(KEY, given), when);
      for (const e of events) expect(parseEvalEvent(JSON.stringify(e))).toEqual({ ok: true, event: e });
      expect(foldEval(KEY, [...given, ...events]).clock).toBe(then.at(-1)!.clock);
    }
  });
});

describe('the readings fold', () => {
  it('keeps every reading with its filer and time, and ignores a replayed event', () => {
    const s = foldEval(KEY, [measured(1), measured(2, { id: 'r2', outcome: 'error' }), measured(2, { id: 'r2', outcome: 'error' })]);
    expect(s.scenario).toBe('checkout/pays');
    expect(s.readings.map((r) => [r.id, r.outcome, r.by, r.at])).toEqual([
      ['r1', 'pass', by, at],
      ['r2', 'error', by, at],
    ]);
  });
});

describe('parseEvalEvent', () => {
  const good = measured(1);
  it('accepts a well-formed event', () => expect(parseEvalEvent(JSON.stringify(good))).toEqual({ ok: true, event: good }));
  it.each([
    ['not JSON', '{', /is not JSON/],
    ['a future format', JSON.stringify({ ...good, v: 2 }), /upgrade trellis/],
    ['a thread event', JSON.stringify({ ...good, type: 'opened' }), /unknown type "opened"/],
    ['an outcome outside the set', JSON.stringify({ ...good, data: data({ outcome: 'skip' as never }) }), /data\.outcome/],
    ['a bad scenario id', JSON.stringify({ ...good, data: data({ scenario: '../x' }) }), /data\.scenario/],
    ['a missing reading id', JSON.stringify({ ...good, data: { ...data(), id: undefined } }), /data\.id/],
    ['a string duration', JSON.stringify({ ...good, data: { ...data(), durationMs: '5' } }), /data\.durationMs/],
  ])('refuses %s, saying why', (_, input, reason) => {
    const out = parseEvalEvent(input);
    expect(out.ok).toBe(false);
    if (!out.ok) expect(out.reason).toMatch(reason);
  });

  it('describes a reading so git log of the eval ref reads as an audit', () => {
    expect(describeEvalEvent(measured(1, { outcome: 'fail', score: 3 }))).toBe(`measured fail (score 3) in trunk at ${SHA.slice(0, 12)} in 12 ms: reading r1`);
  });
});

describe('scenario ids and their ref keys', () => {
  it.each(['checkout/pays', 'a', 'x_1/y-2/z.v2'])('%s is an id whose key is one ref component and round-trips', (id) => {
    expect(isScenarioId(id)).toBe(true);
    expect(scenarioKey(id)).not.toContain('/');
    expect(scenarioOfKey(scenarioKey(id))).toBe(id);
  });
  it.each(['', '../x', 'a//b', 'a/.hidden', 'a..b', 'x.lock', 'a+b', 'with space', 'trail.'])('%j is not a scenario id', (id) => expect(isScenarioId(id)).toBe(false));
});

describe('eval-remark scope on opened (old events still parse)', () => {
  const opened = { v: 1, type: 'opened', at, by, clock: 1, data: { concern: 'c', body: '', nodes: [] } };
  it('a scenario-only scope from before readings parses and folds', () => {
    const e = { ...opened, data: { ...opened.data, scope: { scenario: 's' } } };
    const parsed = parseThreadEvent(JSON.stringify(e));
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(foldThread('t', [parsed.event]).scope).toEqual({ scenario: 's' });
  });
  it('a scope naming a reading and its originator folds with both', () => {
    const e = { ...opened, data: { ...opened.data, scope: { scenario: 's', reading: 'r1', originator: 'sess-9' } } };
    const parsed = parseThreadEvent(JSON.stringify(e));
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(foldThread('t', [parsed.event]).scope).toEqual({ scenario: 's', reading: 'r1', originator: 'sess-9' });
  });
  it('a reading that is not text is refused', () => {
    expect(parseThreadEvent(JSON.stringify({ ...opened, data: { ...opened.data, scope: { scenario: 's', reading: 3 } } })).ok).toBe(false);
  });
});
