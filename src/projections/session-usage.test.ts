import { describe, expect, it } from 'vitest';
import type { UsageEntry } from '../events/index.js';
import { emptyUsage, evolveUsage, RECENT, usageView, type SessionUsage } from './session-usage.js';

let clock = 0;
const read = (u: SessionUsage, entries: UsageEntry[], at = '2026-11-27T10:00:00.000Z', file = 'f'): SessionUsage =>
  evolveUsage(u, { v: 1, type: 'usage', at, by: 's', clock: ++clock, source: 'hook', data: { agent: 'claude', file, from: 0, to: 1, entries, turns: 1, context: null } });
const e = (key: string, output: number, usd: number | null = 0.01): UsageEntry => ({ key, model: 'm', input: 10, output, cacheRead: 100, cacheWrite: 1, usd, priced: usd === null ? null : 't' });

describe('the usage fold', () => {
  it('a response read again (its final figure, a replay) replaces its figure in its hour, never adds', () => {
    let u = read(emptyUsage, [e('a', 1), e('b', 5)]);
    u = read(u, [e('a', 250)], '2026-11-27T11:00:00.000Z');
    const v = usageView('claude', u);
    expect('total' in v && v.total).toMatchObject({ input: 20, output: 255, responses: 2, usd: 0.02 });
    expect(u.hours['2026-11-27T10']!.m!.responses).toBe(1);
    expect(u.hours['2026-11-27T11']!.m).toMatchObject({ responses: 1, output: 250 });
    expect(u.byFile.f).toMatchObject({ responses: 2, output: 255 });
  });
  it('stays bounded: only the latest RECENT responses are kept by key, the totals keep them all', () => {
    let u = emptyUsage;
    for (let i = 0; i < RECENT + 100; i++) u = read(u, [e(`k${i}`, 1)]);
    expect(Object.keys(u.recent).length).toBe(RECENT);
    expect(u.recent.k0).toBeUndefined();
    expect(u.byFile.f!.responses).toBe(RECENT + 100);
  });
  it('an unpriced model is named, its dollars never guessed; a shell has none', () => {
    const v = usageView('codex', read(emptyUsage, [e('a', 1, null)]));
    expect('total' in v && v.total).toMatchObject({ usd: 0, unpriced: ['m'] });
    expect(usageView('shell', undefined)).toEqual({ none: expect.stringMatching(/no token usage or cost/) });
  });
  it('the agent’s own cost (opencode) is kept beside ours, replaced with its response, absent where never said', () => {
    let u = read(emptyUsage, [{ ...e('a', 1, null), agentUsd: 0.25 }, { ...e('b', 1, null), agentUsd: 0.5 }]);
    u = read(u, [{ ...e('a', 2, null), agentUsd: 0.3 }]);
    const v = usageView('opencode', u);
    expect('total' in v && v.total).toMatchObject({ usd: 0, unpriced: ['m'], responses: 2 });
    expect('total' in v && v.total.agentUsd).toBeCloseTo(0.8, 12);
    const claude = usageView('claude', read(emptyUsage, [e('a', 1)]));
    expect('total' in claude && 'agentUsd' in claude.total).toBe(false);
  });
});
