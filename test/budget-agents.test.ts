import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { calcPrice } from '@pydantic/genai-prices';
import { describe, expect, it } from 'vitest';
import { agentTestBed, CLAUDE_VERSIONS } from './helpers/agents.js';
import { usageFor } from './fake-model/server.js';
import { ok, trellis } from './helpers/repo.js';
import { tmuxHas, waitFor } from './helpers/sessions.js';

/*
 * Issue 42, budgets: the real Claude Code (the oldest of the matrix) against the fake model, whose every
 * answer has known usage, priced by the table. A session budget of one and a half answers' price lets the
 * first answer through and stops the session at the second: its agent is stopped, the session waits
 * `awaiting{budget}` for a person, and resumes only once the budget is raised.
 */
const bed = agentTestBed();
const AGENT_MS = 45_000;
const MODEL = 'claude-opus-4-8';
const priceOf = (n: number): number => {
  const u = usageFor(n);
  return calcPrice({ input_tokens: u.input + u.cacheRead + u.cacheWrite, output_tokens: u.output, cache_read_tokens: u.cacheRead, cache_write_tokens: u.cacheWrite }, MODEL, { providerId: 'anthropic' })!.total_price;
};

describe('sessions.budgetUsd', () => {
  it('a budget of a few cents stops a real Claude Code session at the fake’s second answer, awaiting{budget}', async () => {
    const p = bed.project({ claudeVersion: CLAUDE_VERSIONS[0] });
    // Every answer costs about the same (the fake's usage grows by a few tokens per answer): 1.5 answers' worth.
    const budget = Number((1.5 * priceOf(3)).toFixed(4));
    expect(budget).toBeGreaterThan(0.01);
    expect(budget).toBeLessThan(0.2);
    writeFileSync(join(p.dir, 'trellis.local.json'), JSON.stringify({ sessions: { minFreeMb: 0, max: 8, budgetUsd: budget } }));
    bed.fake.clearScript();
    const start = bed.fake.answered.length;
    bed.fake.script({ text: 'First answer' }, { text: 'Second answer' });
    const id = await p.spawn('Say something', 'claude');
    await waitFor('the first turn to end', async () => (await p.show(id)).reason === 'turn-end', AGENT_MS);
    const first = await p.show(id);
    expect(first.state).toBe('awaiting');
    await ok(p.dir, ['session', 'prompt', id, '--body', 'again please'], { env: p.env });
    await waitFor('the session to stop at its budget', async () => (await p.show(id)).reason === 'budget', AGENT_MS);
    const held = await p.show(id);
    expect(held).toMatchObject({ state: 'awaiting', reason: 'budget', source: 'supervisor' });
    // The budget as written in trellis.json; the cost to the budget's own decimals, so it never reads as under it.
    const decimals = Math.max(2, (String(budget).split('.')[1] ?? '').length);
    const said = /^the session has cost \$(\d+\.\d+), its budget is (\$\d+\.\d+) \(sessions\.budgetUsd\)$/.exec(held.detail as string);
    expect(said?.[2]).toBe(`$${budget.toFixed(decimals)}`);
    expect(said![1]!.split('.')[1]).toHaveLength(decimals);
    expect(Number(said![1])).toBeGreaterThanOrEqual(budget);
    const main = bed.fake.answered.slice(start).filter((a) => a.kind !== 'side');
    expect(main.length).toBe(2);
    expect((held.usage as { total: { responses: number; usd: number } }).total).toMatchObject({ responses: 2 });
    expect((held.usage as { total: { usd: number } }).total.usd).toBeGreaterThanOrEqual(budget);
    expect(Math.abs(Number(said![1]) - (held.usage as { total: { usd: number } }).total.usd)).toBeLessThanOrEqual(0.5 * 10 ** -decimals + 1e-12);
    // The agent was stopped; its exit leaves the session waiting for a person.
    await waitFor('the agent’s tmux session to end', () => !tmuxHas(p.home, id), 10_000);
    expect((await p.show(id)).reason).toBe('budget');
    // Resumed with the same budget: refused, with its repair.
    const refused = await trellis(p.dir, ['session', 'resume', id], { env: p.env });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/still over its budget: .*repair: raise the budget in trellis\.json/);
    expect((await p.show(id)).reason).toBe('budget');
    // A bad budget is refused with its repair.
    writeFileSync(join(p.dir, 'trellis.local.json'), JSON.stringify({ sessions: { minFreeMb: 0, max: 8, budgetUsd: '5$' } }));
    const bad = await trellis(p.dir, ['session', 'resume', id], { env: p.env });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('"sessions.budgetUsd" must be a number of US dollars above 0, not "5$"; repair: write it as a plain number');
    // Raised: the resume is accepted and the agent starts again.
    writeFileSync(join(p.dir, 'trellis.local.json'), JSON.stringify({ sessions: { minFreeMb: 0, max: 8, budgetUsd: 1 } }));
    await ok(p.dir, ['session', 'resume', id], { env: p.env });
    await waitFor('the resumed agent to wait', async () => (await p.show(id)).state === 'awaiting', AGENT_MS);
    expect((await p.show(id)).reason).not.toBe('budget');
  }, 180_000);
});
