import { describe, expect, it } from 'vitest';
import type { EvalEvent, Reading } from '../events/index.js';
import { foldEval } from './eval-readings.js';
import { parseScenarios, uniqueScenarios, type ScenarioDecl } from './scenarios.js';
import { buildScoreboard, trunkOutcomes, type ScopeDeclarations, type ScopeInfo } from './scoreboard.js';
import { foldThread, type ThreadState } from './thread.js';

const scope = (name: string): ScopeInfo => ({ name, worktree: `/w/${name}`, branch: name === 'trunk' ? 'main' : `trellis/${name}`, head: null });
const decl = (id: string, node = 'checkout'): ScenarioDecl => ({ id, run: `check ${id}`, timeoutS: 600, node });
const at = (n: number) => new Date(Date.UTC(2026, 2, 1, 10, 0, n)).toISOString();

let serial = 0;
/** A scenario's stream from readings given as [scope, outcome] in filing order, one second apart. */
function stream(scenario: string, readings: [string, Reading['outcome']][]) {
  const events: EvalEvent[] = readings.map(([s, outcome], i) => ({
    v: 1,
    type: 'measured',
    at: at(i),
    by: i % 2 ? 'sess-1' : 'ann',
    clock: i + 1,
    data: { id: `r${++serial}`, scenario, scope: s, commit: null, outcome, durationMs: 1, output: null },
  }));
  return foldEval(scenario.replace(/\//g, '+'), events);
}

function remark(id: string, scenario: string, reading?: string, closed = false): ThreadState {
  const opened = { v: 1, type: 'opened', at: at(50), by: 'bob', clock: 1, data: { concern: `about ${scenario}`, body: '', nodes: [], scope: { scenario, ...(reading ? { reading } : {}) } } } as const;
  return foldThread(id, closed ? [opened, { v: 1, type: 'closed', at: at(51), by: 'bob', clock: 2, data: {} }] : [opened]);
}

describe('buildScoreboard: given declarations, readings and remarks, then cells', () => {
  it('no readings: every declared scenario has an unmeasured cell in each scope declaring it', () => {
    const board = buildScoreboard({ scopes: [{ scope: scope('trunk'), scenarios: [decl('b/two'), decl('a/one')] }], streams: [], remarks: [] });
    expect(board.scenarios.map((s) => s.id)).toEqual(['a/one', 'b/two']);
    expect(board.scenarios[0]!.cells).toEqual([{ scope: 'trunk', live: true, declared: true, latest: null, last: [], readings: 0, remarks: [], stale: false }]);
  });

  it('the latest reading per scope, the last 10 outcomes newest first, and the count', () => {
    const outcomes: Reading['outcome'][] = ['fail', 'pass', 'pass', 'error', 'pass', 'pass', 'pass', 'fail', 'pass', 'pass', 'pass', 'fail'];
    const s = stream('a/one', [...outcomes.map((o) => ['trunk', o] as [string, Reading['outcome']]), ['sess-1', 'pass']]);
    const board = buildScoreboard({ scopes: [{ scope: scope('trunk'), scenarios: [decl('a/one')] }, { scope: scope('sess-1'), scenarios: [decl('a/one')] }], streams: [s], remarks: [] });
    const [trunk, sess] = board.scenarios[0]!.cells;
    expect(trunk!.latest!.outcome).toBe('fail');
    expect(trunk!.latest!.id).toBe(s.readings[11]!.id);
    expect(trunk!.last).toEqual([...outcomes].reverse().slice(0, 10));
    expect(trunk!.readings).toBe(12);
    expect(sess).toMatchObject({ scope: 'sess-1', live: true, declared: true, readings: 1, last: ['pass'] });
  });

  it('a reading at another commit than its live scope’s head is stale; one at the head, or in a gone scope, is not', () => {
    const s = foldEval('a+one', [
      { v: 1, type: 'measured', at: at(1), by: 'ci', clock: 1, data: { id: 'old', scenario: 'a/one', scope: 'trunk', commit: 'a'.repeat(40), outcome: 'fail', durationMs: 1, output: null } },
      { v: 1, type: 'measured', at: at(2), by: 'ci', clock: 2, data: { id: 'here', scenario: 'a/one', scope: 'sess-1', commit: 'b'.repeat(40), outcome: 'pass', durationMs: 1, output: null } },
      { v: 1, type: 'measured', at: at(3), by: 'ci', clock: 3, data: { id: 'gone', scenario: 'a/one', scope: 'gone-1', commit: 'c'.repeat(40), outcome: 'pass', durationMs: 1, output: null } },
    ]);
    const board = buildScoreboard({
      scopes: [
        { scope: { ...scope('trunk'), head: 'd'.repeat(40) }, scenarios: [decl('a/one')] },
        { scope: { ...scope('sess-1'), head: 'b'.repeat(40) }, scenarios: [decl('a/one')] },
      ],
      streams: [s],
      remarks: [],
    });
    expect(board.scenarios[0]!.cells.map((c) => [c.scope, c.stale, c.latest?.commit?.slice(0, 1)])).toEqual([
      ['trunk', true, 'a'],
      ['sess-1', false, 'b'],
      ['gone-1', false, 'c'],
    ]);
  });

  it('a scope that is gone keeps its readings in a cell marked not live, after the live ones', () => {
    const s = stream('a/one', [['old-branch', 'pass'], ['trunk', 'fail']]);
    const board = buildScoreboard({ scopes: [{ scope: scope('trunk'), scenarios: [decl('a/one')] }], streams: [s], remarks: [] });
    expect(board.scenarios[0]!.cells.map((c) => [c.scope, c.live, c.declared, c.latest?.outcome])).toEqual([
      ['trunk', true, true, 'fail'],
      ['old-branch', false, false, 'pass'],
    ]);
  });

  it('a scenario declared only in a worktree has a cell there only; one declared nowhere live keeps its row and readings, with no declaration', () => {
    const board = buildScoreboard({
      scopes: [{ scope: scope('trunk'), scenarios: [] }, { scope: scope('sess-2'), scenarios: [decl('new/one')] }],
      streams: [stream('gone/one', [['trunk', 'pass']])],
      remarks: [],
    });
    expect(board.scenarios.map((s) => [s.id, s.node, s.declaredIn, s.cells.map((c) => [c.scope, c.declared, c.readings])])).toEqual([
      ['gone/one', null, [], [['trunk', false, 1]]],
      ['new/one', 'checkout', ['sess-2'], [['sess-2', true, 0]]],
    ]);
  });

  it('open remarks sit in the cell of their reading’s scope; closed ones and other scenarios’ do not; reading-less ones stay on the row', () => {
    const s = stream('a/one', [['trunk', 'pass'], ['sess-1', 'fail']]);
    const [trunkReading, sessReading] = s.readings;
    const board = buildScoreboard({
      scopes: [{ scope: scope('trunk'), scenarios: [decl('a/one')] }, { scope: scope('sess-1'), scenarios: [decl('a/one')] }],
      streams: [s],
      remarks: [remark('t1', 'a/one', sessReading!.id), remark('t2', 'a/one', trunkReading!.id, true), remark('t3', 'a/one'), remark('t4', 'b/two', trunkReading!.id)],
    });
    const row = board.scenarios[0]!;
    expect(row.cells.map((c) => c.remarks.map((r) => r.thread))).toEqual([[], ['t1']]);
    expect(row.cells[1]!.remarks[0]).toEqual({ thread: 't1', concern: 'about a/one', by: 'bob', created: at(50), reading: sessReading!.id, replies: 0 });
    expect(row.remarks.map((r) => r.thread)).toEqual(['t3']);
  });

  it('is deterministic: the same inputs in another order give the same board', () => {
    const a = stream('a/one', [['trunk', 'pass']]);
    const b = stream('b/two', [['trunk', 'fail']]);
    const scopes = [{ scope: scope('trunk'), scenarios: [decl('a/one'), decl('b/two')] }];
    expect(buildScoreboard({ scopes, streams: [a, b], remarks: [] })).toEqual(buildScoreboard({ scopes, streams: [b, a], remarks: [] }));
  });
});

describe('trunkOutcomes: the board’s slim per-node fold', () => {
  it('each node’s scenarios with their latest trunk outcome and reading, ignoring other scopes', () => {
    const s = stream('a/one', [['trunk', 'pass'], ['trunk', 'fail'], ['sess-1', 'pass']]);
    const out = trunkOutcomes([decl('a/one', 'n1'), decl('a/two', 'n1'), decl('b/x', 'n2')], [s]);
    expect(out.get('n1')).toEqual([
      { id: 'a/one', outcome: 'fail', reading: s.readings[1]!.id },
      { id: 'a/two', outcome: null, reading: null },
    ]);
    expect(out.get('n2')).toEqual([{ id: 'b/x', outcome: null, reading: null }]);
  });
});

describe('scenario declarations in front matter', () => {
  it('reads well-formed entries, with the default timeout', () => {
    expect(parseScenarios('n', [{ id: 'a/one', run: 'true' }, { id: 'a/two', run: 'false', timeoutS: 5 }])).toEqual({
      scenarios: [
        { id: 'a/one', run: 'true', timeoutS: 600, node: 'n' },
        { id: 'a/two', run: 'false', timeoutS: 5, node: 'n' },
      ],
    });
  });
  it.each([
    ['not a list', { id: 'x' }, /must be a list/],
    ['an entry that is not a mapping', ['x'], /scenarios\[1\] must be a mapping/],
    ['a bad id', [{ id: 'a b', run: 'x' }], /scenarios\[1\].*not a scenario id/],
    ['no run', [{ id: 'a' }], /needs "run"/],
    ['a zero timeout', [{ id: 'a', run: 'x', timeoutS: 0 }], /timeoutS 0/],
    ['an unknown key', [{ id: 'a', run: 'x', cmd: 'y' }], /unknown key 'cmd'/],
    ['a repeated id', [{ id: 'a', run: 'x' }, { id: 'a', run: 'y' }], /repeats the id 'a'/],
  ])('%s is a problem of the node; good entries stay', (_, value, problem) => {
    const out = parseScenarios('n', Array.isArray(value) ? [{ id: 'ok', run: 'true' }, ...value] : value);
    expect(out.problem).toMatch(problem);
    if (Array.isArray(value)) expect(out.scenarios[0]!.id).toBe('ok');
  });
  it('an id declared by two nodes stays with the first; the second node gets the problem', () => {
    const nodes: { id: string; scenarios: ScenarioDecl[]; problem?: string }[] = [
      { id: 'a', scenarios: [decl('s/1', 'a')] },
      { id: 'b', scenarios: [decl('s/1', 'b'), decl('s/2', 'b')] },
    ];
    const out = uniqueScenarios(nodes);
    expect(out[0]).toBe(nodes[0]);
    expect(out[1]!.scenarios.map((s) => s.id)).toEqual(['s/2']);
    expect(out[1]!.problem).toMatch(/'s\/1' is already declared by node 'a'/);
  });
});
