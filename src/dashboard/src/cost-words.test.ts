import { describe, expect, it } from 'vitest';
import { costChip, costWords, issueCostWords } from './cost-words';

const total = { input: 1002, output: 206, cacheRead: 5014, cacheWrite: 322, responses: 3, usd: 0.0123, unpriced: [] as string[] };

describe('the cost words of a session page', () => {
  it('say dollars, tokens, replies, turns and how full the context is, warning near the limit', () => {
    const w = costWords({ total, byModel: { 'claude-opus-4-8': total }, turns: 2, context: { model: 'claude-opus-4-8', used: 850_000, window: 1_000_000, percent: 85, nearLimit: true } });
    expect(w).toMatchObject({ line: '$0.0123 · 6,544 tokens (1,002 in, 206 out, 5,014 from cache, 322 to cache) · 3 replies · 2 turns', models: [] });
    expect(typeof w !== 'string' && w?.context).toEqual({ text: "85% of claude-opus-4-8's 1,000,000-token context in use (850,000 tokens)", percent: 85, warn: expect.stringMatching(/Near the limit/) });
  });
  it('never show $0 for a model without a price; a shell says it runs no model; nothing read yet shows nothing', () => {
    const w = costWords({ total: { ...total, usd: 0, unpriced: ['gpt-fake'] }, byModel: {}, turns: 1, context: null });
    expect(typeof w !== 'string' && w?.line).toMatch(/^price unknown \(gpt-fake\) · /);
    expect(costWords({ none: 'a shell session runs no model' })).toMatch(/shell runs no model/);
    expect(costWords({ total: { ...total, responses: 0 }, byModel: {}, turns: 0, context: null })).toBeNull();
    expect(costChip({ tokens: 10, usd: 0.5, unpriced: [], contextPercent: 91.5, nearLimit: true })).toEqual({ text: '$0.5000 · context 91.5%', warn: true });
  });
  it('show what the agent itself says it cost beside ours, where it says (opencode)', () => {
    const w = costWords({ total: { ...total, usd: 0, unpriced: ['gpt-fake'], agentUsd: 0.0456 }, byModel: {}, turns: 1, context: null });
    expect(typeof w !== 'string' && w?.line).toMatch(/^price unknown \(gpt-fake\) \(the agent says \$0\.0456\) · 6,544 tokens/);
  });
});

describe('the issue page', () => {
  it('sums the cost of the sessions that worked on the issue, naming an unknown price', () => {
    const cost = (usd: number, unpriced: string[] = []) => ({ tokens: 1000, usd, unpriced, contextPercent: null, nearLimit: false });
    const sessions = [{ issue: 'i1', cost: cost(0.25) }, { issue: 'i1', cost: cost(0, ['gpt-fake']) }, { issue: 'i2', cost: cost(9) }, { issue: 'i1' }];
    expect(issueCostWords(sessions, 'i1')).toBe('The work on this issue cost $0.2500 + price unknown (gpt-fake) so far: 2,000 tokens over 2 sessions.');
    expect(issueCostWords(sessions, 'i3')).toBeNull();
  });
});
