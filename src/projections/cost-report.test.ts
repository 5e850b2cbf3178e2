import { describe, expect, it } from 'vitest';
import { costLines, costReport, parseSince } from './cost-report.js';
import { initialSession, type SessionState } from './session.js';
import { emptyUsage, evolveUsage } from './session-usage.js';
import { projectSpend, weekStart } from './spend-periods.js';

const entry = (at: string, model: string, usd: number | null, n: number) => ({ model, input: n, output: n, cacheRead: n, cacheWrite: n, usd, priced: usd === null ? null : 'table', at });
const session = (id: string, harness: string, issue: string | null, nodes: string[], entries: Record<string, ReturnType<typeof entry>>): SessionState => ({
  ...initialSession(id),
  status: 'running',
  harness,
  issue,
  nodes,
  title: `task ${id}`,
  usage: Object.entries(entries).reduce(
    (u, [key, { at, ...e }]) => evolveUsage(u, { v: 1, type: 'usage', at, by: id, clock: 1, source: 'hook', data: { agent: 'claude', file: 'f', from: 0, to: 1, entries: [{ key, ...e }], turns: 0, context: null } }),
    emptyUsage,
  ),
});

const states = [
  session('s1', 'claude', 'i1', ['a', 'b'], { m1: entry('2026-11-26T10:00:00.000Z', 'claude-opus-4-8', 0.5, 10), m2: entry('2026-11-27T10:00:00.000Z', 'claude-opus-4-8', 0.25, 1) }),
  session('s2', 'codex', 'i1', [], { c1: entry('2026-11-27T11:00:00.000Z', 'gpt-fake', null, 100) }),
  session('s3', 'shell', null, [], {}),
];

describe('trellis cost', () => {
  it('groups each response once by session, issue, node and day; the total counts a session of two nodes once', () => {
    const bySession = costReport(states, 'session', null);
    expect(bySession.rows.map((r) => [r.key, r.usd, r.input])).toEqual([['s1', 0.75, 11], ['s2', 0, 100]]);
    expect(bySession.total).toMatchObject({ input: 111, usd: 0.75, responses: 3, unpriced: ['gpt-fake'] });
    expect(bySession.shells).toBe(1);
    expect(costReport(states, 'issue', null).rows).toMatchObject([{ key: 'i1', sessions: 2, input: 111 }]);
    expect(costReport(states, 'node', null).rows.map((r) => [r.key, r.input])).toEqual([['a', 11], ['b', 11], ['(none)', 100]]);
    expect(costReport(states, 'node', null).total.input).toBe(111);
    expect(costReport(states, 'day', null).rows.map((r) => [r.key, r.input])).toEqual([['2026-11-26', 10], ['2026-11-27', 101]]);
  });
  it('--since counts only use since then', () => {
    const now = new Date('2026-11-27T12:00:00.000Z');
    expect(costReport(states, 'session', parseSince('today', now)).total.input).toBe(101);
    expect(costReport(states, 'session', parseSince('1d', now)).total.input).toBe(101);
    expect(costReport(states, 'session', parseSince('2026-11-01', now)).total.input).toBe(111);
  });
  it('a model without a price says "unknown price", never $0', () => {
    const text = costLines(costReport(states, 'session', null));
    expect(text).toMatch(/^s2 .*unknown price \(gpt-fake\)/m);
    expect(text).toMatch(/^total .*\$0\.75 \+ unknown price \(gpt-fake\)/m);
    expect(text).toMatch(/1 shell session\(s\) run no model/);
  });
  it("the project's spend today and this week (UTC, the week from Monday), with the daily budget", () => {
    // Friday 2026-11-27: the week began on Monday the 23rd; a Monday's week is itself, a Sunday's began six days before.
    expect(weekStart(new Date('2026-11-27T12:00:00.000Z'))).toBe('2026-11-23T00:00:00.000Z');
    expect(weekStart(new Date('2026-11-23T00:00:00.000Z'))).toBe('2026-11-23T00:00:00.000Z');
    expect(weekStart(new Date('2026-11-29T23:59:59.000Z'))).toBe('2026-11-23T00:00:00.000Z');
    expect(parseSince('week', new Date('2026-11-27T12:00:00.000Z'))).toBe('2026-11-23T00:00:00.000Z');
    const spend = projectSpend(states, new Date('2026-11-27T12:00:00.000Z'), 2);
    expect(spend.today).toMatchObject({ since: '2026-11-27T00:00:00.000Z', usd: 0.25, input: 101, responses: 2, unpriced: ['gpt-fake'] });
    expect(spend.week).toMatchObject({ since: '2026-11-23T00:00:00.000Z', usd: 0.75, input: 111, responses: 3 });
    expect(spend.budgetUsdPerDay).toBe(2);
    // The next Monday: last week's use is in neither.
    expect(projectSpend(states, new Date('2026-11-30T08:00:00.000Z'), null)).toMatchObject({ today: { usd: 0, responses: 0 }, week: { usd: 0, responses: 0 }, budgetUsdPerDay: null });
    expect(costLines({ ...costReport(states, 'day', null), spend })).toMatch(/^spent today \$0\.25 \+ unknown price \(gpt-fake\) of \$2\.00 \(sessions\.budgetUsdPerDay\), this week \(since Monday, UTC\) \$0\.75 \+ unknown price \(gpt-fake\)$/m);
    // Below a cent is never $0.00; a budget finer than cents is said as written.
    const tiny = { ...spend.today, usd: 0.0004, unpriced: [] };
    expect(costLines({ ...costReport([], 'day', null), spend: { today: tiny, week: tiny, budgetUsdPerDay: 0.0222 } })).toMatch(/^spent today < \$0\.01 of \$0\.0222 \(sessions\.budgetUsdPerDay\), this week \(since Monday, UTC\) < \$0\.01$/m);
  });
  it('bad --by or --since is refused, naming what is accepted', () => {
    expect(() => parseSince('last tuesday', new Date())).toThrow(/is not a date .*7d, 12h.*today/);
    expect(() => costReport(states, 'week' as never, null)).toThrow(/not one of session, issue, node, day/);
  });
});
