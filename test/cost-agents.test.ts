import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { calcPrice } from '@pydantic/genai-prices';
import { describe, expect, it } from 'vitest';
import { agentTestBed, CLAUDE_VERSIONS, CODEX_VERSIONS, type AgentProject } from './helpers/agents.js';
import type { AnsweredUsage } from './fake-model/server.js';
import { git, ok, ROOT, tempDir, trellis } from './helpers/repo.js';
import { desktopPage } from './helpers/browser.js';
import { startServe } from './helpers/serve.js';
import { waitFor } from './helpers/sessions.js';
import { dollars } from '../src/projections/money.js';

/*
 * Issue 42: the real agents against the fake model, whose every answer has distinct, known usage. What
 * Trellis records from the agents' own records (Claude Code's transcript, Codex's rollout) must equal,
 * exactly, what the fake answered to the session's main conversation (its side calls, a title, are not
 * in the agent's records and not the conversation).
 */
const bed = agentTestBed();
const AGENT_MS = 45_000;

interface Totals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  responses: number;
  usd: number;
  unpriced: string[];
}
type Usage = { total: Totals; byModel: Record<string, Totals>; turns: number; context: { model: string; used: number; window: number | null; percent: number | null } | null };

const tokensOf = (xs: readonly AnsweredUsage[]) =>
  xs.reduce((a, x) => ({ input: a.input + x.input, output: a.output + x.output, cacheRead: a.cacheRead + x.cacheRead, cacheWrite: a.cacheWrite + x.cacheWrite, responses: a.responses + 1 }), { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, responses: 0 });
const recorded = async (p: AgentProject, id: string) => (await p.show(id)).usage as Usage;
const counted = (t: Totals) => ({ input: t.input, output: t.output, cacheRead: t.cacheRead, cacheWrite: t.cacheWrite, responses: t.responses });

/** Two turns: a Bash call (a text block and the call in ONE message: two transcript lines of one id) and its follow-up, then a prompt. */
async function twoTurns(p: AgentProject, harness: 'claude' | 'codex'): Promise<{ id: string; main: AnsweredUsage[] }> {
  bed.fake.clearScript();
  const start = bed.fake.answered.length;
  if (harness === 'claude') bed.fake.script({ tool: 'bash', command: 'echo hi > cost.txt', say: 'I will write the file.', after: 'Wrote it.' }, { text: 'Second answer' });
  else bed.fake.script({ text: 'Codex first' }, { text: 'Codex second' });
  const id = await p.spawn(harness === 'claude' ? 'Make a file' : 'Say hi', harness);
  const first = await waitFor('the first turn to end or ask', async () => {
    const s = await p.show(id);
    return s.state === 'awaiting' && (s.reason === 'permission' || s.reason === 'turn-end') && s.reason;
  }, AGENT_MS);
  // 2.1.197 asks for the Bash call; 2.1.332's auto mode runs it unasked.
  if (first === 'permission') await ok(p.dir, ['session', 'keys', id, 'Enter'], { env: p.env });
  await waitFor('the first turn to end', async () => (await p.show(id)).reason === 'turn-end', AGENT_MS);
  await ok(p.dir, ['session', 'prompt', id, '--body', 'again please'], { env: p.env });
  await waitFor('the second answer', () => /Second answer|Codex second/.test(p.screen(id)), AGENT_MS);
  await waitFor('the second turn to end', async () => (await p.show(id)).reason === 'turn-end', AGENT_MS);
  const main = bed.fake.answered.slice(start).filter((a) => a.kind !== 'side');
  expect(main.length).toBe(harness === 'claude' ? 3 : 2);
  // Every figure is recorded once the agent's last hook has read it.
  await waitFor('the recorded totals to reach the fake’s', async () => (await recorded(p, id)).total.responses >= main.length, 20_000);
  return { id, main };
}

describe.each(CLAUDE_VERSIONS)('the real Claude Code %s', (version) => {
  it('the totals recorded equal the fake’s answers to the main conversation, priced by the table; they outlive the transcript', async () => {
    const p = bed.project({ claudeVersion: version });
    const { id, main } = await twoTurns(p, 'claude');
    const u = await recorded(p, id);
    expect(counted(u.total)).toEqual(tokensOf(main));
    expect(u.turns).toBe(2);
    // The fake answers as the model claude asked for: one the price table knows (claude-opus-4-8, claude-opus-5-5).
    const model = main[0]!.model;
    const price = main.reduce((n, a) => n + calcPrice({ input_tokens: a.input + a.cacheRead + a.cacheWrite, output_tokens: a.output, cache_read_tokens: a.cacheRead, cache_write_tokens: a.cacheWrite }, a.model, { providerId: 'anthropic' })!.total_price, 0);
    expect(u.total.unpriced).toEqual([]);
    expect(u.total.usd).toBeCloseTo(price, 10);
    const last = main[main.length - 1]!;
    expect(u.context).toMatchObject({ model, used: last.input + last.cacheRead + last.cacheWrite + last.output });
    expect(u.context!.window).toBeGreaterThan(0);

    // The agent deletes its transcript (its own 30-day cleanup): the figures are in the session's stream.
    const agentId = (await p.show(id)).agentSessionId as string;
    const projects = join(p.agent.home, '.claude', 'projects');
    const transcript = readdirSync(projects, { recursive: true, encoding: 'utf8' }).find((f) => f.endsWith(`${agentId}.jsonl`))!;
    rmSync(join(projects, transcript));
    await ok(p.dir, ['session', 'signal', id, 'Notification'], { env: p.env, input: JSON.stringify({ hook_event_name: 'Notification', notification_type: 'idle_prompt', session_id: agentId, transcript_path: join(projects, transcript) }) });
    expect(counted((await recorded(p, id)).total)).toEqual(tokensOf(main));
    const report = JSON.parse(await ok(p.dir, ['cost', '--json'], { env: p.env })) as { rows: (Totals & { key: string })[] };
    expect(counted(report.rows.find((r) => r.key === id)!)).toEqual(tokensOf(main));
    // The review bundle says what this change cost.
    const bundle = JSON.parse(await ok(p.dir, ['review', id, '--json'], { env: p.env })) as { cost: Usage };
    expect(counted(bundle.cost.total)).toEqual(tokensOf(main));
    expect(await ok(p.dir, ['review', id], { env: p.env })).toContain(`\nwhat this change cost: ${dollars(u.total.usd)} · `);

    // Where people look (once, with the oldest version): the session page's cost card and the list's chip, in Chromium.
    if (version !== CLAUDE_VERSIONS[0]) return;
    writeFileSync(join(p.dir, 'trellis.json'), '{}\n');
    const serve = await startServe(ROOT, p.dir, p.env);
    const { browser, page } = await desktopPage();
    try {
      await page.goto(new URL(`#/sessions/${id}`, serve.url).href);
      const card = page.getByTestId('session-cost');
      await card.waitFor({ timeout: 15_000 });
      expect(await card.textContent()).toContain(`${dollars(u.total.usd)} · ${(tokensOf(main).input + tokensOf(main).output + tokensOf(main).cacheRead + tokensOf(main).cacheWrite).toLocaleString('en-US')} tokens`);
      expect(await page.getByTestId('context').textContent()).toMatch(/% of claude-opus-4-8's [\d,]+-token context in use/);
      await page.goto(new URL('#/sessions', serve.url).href);
      await page.locator(`[data-session="${id}"] [data-testid="cost-chip"]`).filter({ hasText: dollars(u.total.usd) }).waitFor({ timeout: 15_000 });
    } finally {
      await browser.close();
      await serve.stop();
    }
  }, 180_000);
});

describe.each(CODEX_VERSIONS)('the real Codex %s (and, with the newest, the figures in a second clone after trellis sync)', (codexVersion) => {
  it('the rollout’s latest cumulative total equals the fake’s answers to the conversation; gpt-fake has an unknown price', async () => {
    const p = bed.project({ codexVersion });
    const { id, main } = await twoTurns(p, 'codex');
    const u = await recorded(p, id);
    expect(counted(u.total)).toEqual(tokensOf(main));
    expect(u.turns).toBe(2);
    // The fake model's name is no model the price table knows: its tokens count, its price is unknown, never guessed.
    expect(u.total).toMatchObject({ usd: 0, unpriced: ['gpt-fake'] });
    expect(await ok(p.dir, ['cost'], { env: p.env })).toMatch(/unknown price \(gpt-fake\)/);
    expect(u.context).toMatchObject({ model: 'gpt-fake', window: 258400 });
    // Once is enough for the sync (it is the stream's, not the agent's): with the newest Codex.
    if (codexVersion !== CODEX_VERSIONS[CODEX_VERSIONS.length - 1]) return;

    // The figures travel with trellis sync: a second clone shows the same cost.
    const remote = join(tempDir(), 'remote.git');
    git(p.dir, 'init', '-q', '--bare', '-b', 'main', remote);
    git(p.dir, 'remote', 'add', 'origin', remote);
    git(p.dir, 'push', '-q', 'origin', 'HEAD:main');
    await ok(p.dir, ['sync'], { env: p.env });
    const clone = join(tempDir(), 'clone');
    git(p.dir, 'clone', '-q', remote, clone);
    const env = { ...p.env, TRELLIS_HOME: join(tempDir(), 'home2') };
    expect((await trellis(clone, ['cost', '--json'], { env })).stdout).not.toContain(id);
    await ok(clone, ['sync'], { env });
    const report = JSON.parse(await ok(clone, ['cost', '--json'], { env })) as { rows: (Totals & { key: string })[] };
    expect(counted(report.rows.find((r) => r.key === id)!)).toEqual(tokensOf(main));
  }, 180_000);
});

describe('a shell session', () => {
  it('has no usage and says so', async () => {
    const p = bed.project();
    const id = await p.spawn('', 'shell');
    expect((await p.show(id)).usage).toEqual({ none: expect.stringMatching(/shell session runs no model/) });
    expect(await ok(p.dir, ['session', 'show', id], { env: p.env })).toMatch(/cost: none \(a shell session runs no model/);
  });
});

