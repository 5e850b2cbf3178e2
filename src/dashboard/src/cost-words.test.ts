import { describe, expect, it } from 'vitest';
import { budgetWords, costChip, costWords, hostSpendWords, issueCostWords, rowSpendWords, spawnSpendWords } from './cost-words';

const total = { input: 1002, output: 206, cacheRead: 5014, cacheWrite: 322, responses: 3, usd: 0.0123, unpriced: [] as string[] };

describe('the cost words of a session page', () => {
  it('say dollars, tokens, replies, turns and how full the context is, warning near the limit', () => {
    const w = costWords({ total, byModel: { 'claude-opus-4-8': total }, turns: 2, context: { model: 'claude-opus-4-8', used: 850_000, window: 1_000_000, percent: 85, nearLimit: true } });
    expect(w).toMatchObject({ line: '$0.01 · 6,544 tokens (1,002 in, 206 out, 5,014 from cache, 322 to cache) · 3 replies · 2 turns', models: [] });
    expect(typeof w !== 'string' && w?.context).toEqual({ text: "85% of claude-opus-4-8's 1,000,000-token context in use (850,000 tokens)", percent: 85, warn: expect.stringMatching(/Near the limit/) });
  });
  it('never show $0 for a model without a price; a shell says it runs no model; nothing read yet shows nothing', () => {
    const w = costWords({ total: { ...total, usd: 0, unpriced: ['gpt-fake'] }, byModel: {}, turns: 1, context: null });
    expect(typeof w !== 'string' && w?.line).toMatch(/^price unknown \(gpt-fake\) · /);
    expect(costWords({ none: 'a shell session runs no model' })).toMatch(/shell runs no model/);
    expect(costWords({ total: { ...total, responses: 0 }, byModel: {}, turns: 0, context: null })).toBeNull();
    expect(costChip({ tokens: 10, usd: 0.5, unpriced: [], contextPercent: 91.5, nearLimit: true })).toEqual({ text: '$0.50 · context 91.5%', warn: true });
    // A real cost below a cent is never $0.00.
    expect(costChip({ tokens: 10, usd: 0.004, unpriced: [], contextPercent: null, nearLimit: false })).toEqual({ text: '< $0.01', warn: false });
  });
  it('show what the agent itself says it cost beside ours, where it says (opencode)', () => {
    const w = costWords({ total: { ...total, usd: 0, unpriced: ['gpt-fake'], agentUsd: 0.0456 }, byModel: {}, turns: 1, context: null });
    expect(typeof w !== 'string' && w?.line).toMatch(/^price unknown \(gpt-fake\) \(the agent says \$0\.05\) · 6,544 tokens/);
  });
});

describe('the issue page', () => {
  it('sums the cost of the sessions that worked on the issue, naming an unknown price', () => {
    const cost = (usd: number, unpriced: string[] = []) => ({ tokens: 1000, usd, unpriced, contextPercent: null, nearLimit: false });
    const sessions = [{ issue: 'i1', cost: cost(0.25) }, { issue: 'i1', cost: cost(0, ['gpt-fake']) }, { issue: 'i2', cost: cost(9) }, { issue: 'i1' }];
    expect(issueCostWords(sessions, 'i1')).toBe('The work on this issue cost $0.25 + price unknown (gpt-fake) so far: 2,000 tokens over 2 sessions.');
    expect(issueCostWords(sessions, 'i3')).toBeNull();
  });
});

describe("the project's and the host's spend, and the spawn form's", () => {
  const period = (usd: number, responses = 1, unpriced: string[] = []) => ({ since: '2026-11-27T00:00:00.000Z', input: 1, output: 1, cacheRead: 0, cacheWrite: 0, responses, usd, unpriced });
  it('the spawn form says today against the daily budget, and why a spawn will wait once it is reached', () => {
    expect(spawnSpendWords({ today: period(0.42), week: period(1.2), budgetUsdPerDay: null })).toEqual({ text: 'The project has spent $0.42 today (UTC).', wait: null });
    expect(spawnSpendWords({ today: period(0, 0), week: period(0, 0), budgetUsdPerDay: 5 })).toEqual({ text: 'The project has spent $0.00 of its $5.00 daily budget today (UTC).', wait: null });
    const over = spawnSpendWords({ today: period(5, 3, ['gpt-fake']), week: period(6), budgetUsdPerDay: 5 });
    expect(over.text).toBe('The project has spent $5.00 + price unknown (gpt-fake) of its $5.00 daily budget today (UTC).');
    expect(over.wait).toMatch(/^Today's budget is used up: an agent session spawned now is stopped at its first reply and waits/);
  });
  it("the host's total sums this machine's projects (not another host's), naming the ones not counted", () => {
    const rows = [
      { name: 'a', online: true, spend: { today: period(0.42), week: period(1.2) } },
      { name: 'b', online: true, spend: { today: period(0, 1, ['gpt-fake']), week: period(0.3, 2, ['gpt-fake']) } },
      { name: 'c', online: false },
      { name: 'far', host: 'box', online: true, spend: { today: period(100), week: period(100) } },
    ];
    expect(hostSpendWords(rows)).toEqual({ today: '$0.42 + price unknown (gpt-fake)', week: '$1.50 + price unknown (gpt-fake)', counted: 2, uncounted: 'Not counted: c (its backend is not running).' });
    expect(hostSpendWords([{ name: 'c', online: false }])).toBeNull();
    expect(rowSpendWords({ today: period(0.82), week: period(1.12), budgetUsdPerDay: 0.8 })).toEqual({ text: 'spent $0.82 of $0.80 today · $1.12 this week', over: true });
    expect(rowSpendWords({ today: period(0.5), week: period(0.5) })).toEqual({ text: 'spent $0.50 today · $0.50 this week', over: false });
    expect([budgetWords(5), budgetWords(0.8), budgetWords(0.0222)]).toEqual(['$5.00', '$0.80', '$0.0222']);
  });
});
