import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionCommand } from '../src/events/index.js';
import { serveProject, type Served } from '../src/http/serve.js';
import { dayStart, weekStart } from '../src/projections/spend-periods.js';
import { openProject } from '../src/store/compose/open-project.js';
import { newThreadId } from '../src/store/project/ids.js';
import { encodeProject } from '../src/store/trellis-home.js';
import { desktopPage, screenshot, VIEWPORTS } from './helpers/browser.js';
import { publishRecord, raw, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { cleanupRepos, git, ok, tempDir, tempRepo } from './helpers/repo.js';

/*
 * Issue 42, where people look: the issue page's sum over its sessions, the project's spend today and this
 * week (board and Sessions view), the host home's per-project figures and total, and the spawn form's spend
 * against the daily budget, in a real Chromium against real backends and a real gateway. The usage is
 * appended with the store's own commands (what an agent's hook appends), at known times and known prices,
 * so every figure the page shows is an exact sum the test states.
 */

let home: string;
let alpha: string;
let beta: string;
let gamma: string;
let backends: Served[] = [];
let gw: TestGateway;
let browser: Browser;
let page: Page;
let seen: { dialogs: string[]; errors: string[] };
let issue: string;
let later: string;
let first: string;
let tiny: string;
const offsets = new Map<string, number>();

const now = new Date();
const today = now.toISOString();
// Monday 00:00 UTC: this week (on a Monday, today as well); an hour before it: last week, in neither figure.
const monday = weekStart(now);
const lastWeek = new Date(Date.parse(monday) - 3_600_000).toISOString();
const mondayIsToday = monday === dayStart(now);

/** Appends what an agent's hook would: one response of `model` costing `usd` (null: no price), at `at`. */
async function usage(dir: string, id: string, at: string, model: string, usd: number | null, tokens: number): Promise<void> {
  const from = offsets.get(id) ?? 0;
  offsets.set(id, from + 100);
  const entry = { key: `${id}-${from}`, model, input: tokens, output: tokens, cacheRead: 0, cacheWrite: 0, usd, priced: usd === null ? null : '@pydantic/genai-prices@test' };
  await openProject(dir).sessionLog.write(id, { type: 'record-usage', agent: 'claude', file: '/nowhere/transcript.jsonl', from, to: from + 100, entries: [entry], turns: 1, context: null, by: 'claude', at, source: 'hook' } as SessionCommand);
}

/** A closed claude session of `dir` (on `issue`, if given): its usage is appended by `usage`. */
async function session(dir: string, task: string, issueId: string | null): Promise<string> {
  const p = openProject(dir);
  const id = newThreadId(p.random);
  const base = git(dir, 'rev-parse', 'HEAD').trim();
  const meta = { by: 'human', at: new Date(Date.parse(monday) - 7_200_000).toISOString(), source: 'user' } as const;
  await p.sessionLog.write(id, { type: 'spawn', harness: 'claude', task, nodes: [], issue: issueId, base, branch: `trellis/${id}`, worktree: join(dir, '.trellis-wt', id), ...meta } as SessionCommand);
  await p.sessionLog.write(id, { type: 'close', wip: null, ...meta, at: today } as SessionCommand);
  return id;
}

async function served(dir: string): Promise<void> {
  const b = await serveProject(openProject(dir), { port: 0 });
  backends.push(b);
  await publishRecord(home, dir, b.url, b.instanceId);
}

beforeAll(async () => {
  home = tempDir();
  [alpha, beta, gamma] = [tempRepo(), tempRepo(), tempRepo()];
  writeFileSync(join(alpha, 'trellis.json'), '{\n  "name": "Alpha",\n  "sessions": { "budgetUsdPerDay": 0.8 }\n}\n');
  writeFileSync(join(beta, 'trellis.json'), '{\n  "name": "Beta"\n}\n');
  writeFileSync(join(gamma, 'trellis.json'), '{\n  "name": "Gamma"\n}\n');
  issue = (await ok(alpha, ['issue', 'open', 'Make checkout cheaper'])).trim();
  // Alpha: two sessions on the issue (one with a model the price table lacks), one on nothing.
  const s1 = await session(alpha, 'First try', issue);
  first = s1;
  await usage(alpha, s1, today, 'claude-opus-4-8', 0.12, 1000);
  await usage(alpha, s1, monday, 'claude-opus-4-8', 0.3, 2000);
  await usage(alpha, s1, lastWeek, 'claude-opus-4-8', 1, 4000);
  const s2 = await session(alpha, 'Second try', issue);
  await usage(alpha, s2, today, 'gpt-fake', null, 500);
  await usage(alpha, s2, today, 'claude-opus-4-8', 0.05, 100);
  later = await session(alpha, 'Unrelated', null);
  await usage(alpha, later, today, 'claude-opus-4-8', 0.25, 300);
  // A glance that cost less than a cent: '< $0.01' in its row, never $0.00; it moves no sum below past a cent.
  tiny = await session(alpha, 'A glance', null);
  await usage(alpha, tiny, today, 'claude-opus-4-8', 0.004, 10);
  // Beta: one session, $2 today. Gamma is registered and never served.
  const b1 = await session(beta, 'Beta work', null);
  await usage(beta, b1, today, 'claude-opus-4-8', 2, 100);
  await served(alpha);
  await served(beta);
  gw = await startTestGateway(home);
  for (const path of [alpha, beta, gamma]) expect((await raw(new URL('/projects', gw.url).href, { method: 'POST', body: JSON.stringify({ path }) })).status).toBe(201);
  ({ browser, page, seen } = await desktopPage());
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  for (const b of backends) await b.close();
  cleanupRepos();
});

const at = (b: Served, hash: string) => new URL(hash, b.url).href;
const text = async (testId: string) => (await page.getByTestId(testId).first().textContent())?.replace(/\s+/g, ' ').trim();
const poll = (testId: string, expected: string) => expect.poll(() => text(testId), { timeout: 15_000 }).toBe(expected);
const row = (root: string) => page.getByTestId(`project-${encodeProject(root)}`);
/** A screenshot at each size, the page never wider than the viewport (a phone never scrolls sideways). */
async function look(name: string): Promise<void> {
  for (const vp of Object.values(VIEWPORTS)) {
    await page.setViewportSize(vp);
    await expect.poll(() => page.evaluate(() => document.documentElement.scrollWidth - innerWidth), { timeout: 5_000 }).toBeLessThanOrEqual(0);
    await screenshot(page, name);
  }
  await page.setViewportSize(VIEWPORTS.desktop);
}

// Alpha today: 0.12 + 0.05 + 0.25 + 0.004 (and Monday's 0.30 when today is Monday); this week: all but last week's $1.
const alphaToday = mondayIsToday ? '$0.72' : '$0.42';
const alphaWeek = '$0.72';
const unknown = ' + price unknown (gpt-fake)';

describe("what the project's sessions cost, where people look", () => {
  it("the issue page sums its sessions: $1.47 over two sessions, the unpriced model named", async () => {
    await page.goto(at(backends[0]!, `#/issues/${issue}`));
    // 0.12 + 0.30 + 1.00 (last week counts too: "so far") + 0.05; tokens 2·(1000 + 2000 + 4000 + 500 + 100).
    await poll('issue-cost', `The work on this issue cost $1.47${unknown} so far: 15,200 tokens over 2 sessions.`);
    await look('cost-issue');
  });

  it('the board and the Sessions view say what the project spent today and this week', async () => {
    await page.goto(at(backends[0]!, '#/board'));
    await poll('project-spend', `Spent today ${alphaToday}${unknown} of the $0.80 daily budget · this week ${alphaWeek}${unknown}`);
    await look('cost-board');
    await page.goto(at(backends[0]!, '#/sessions'));
    await poll('spend-today', `${alphaToday}${unknown}`);
    await poll('spend-week', `${alphaWeek}${unknown}`);
    // Each session's own cost, to the cent: the first try's 0.12 + 0.30 + 1.00, the glance's 0.004 below a cent.
    await page.goto(at(backends[0]!, '#/sessions?closed=1'));
    const chip = (id: string) => expect.poll(async () => (await page.locator(`[data-session="${id}"] [data-testid="cost-chip"]`).textContent())?.trim(), { timeout: 15_000 });
    await chip(first).toBe('$1.42');
    await chip(tiny).toBe('< $0.01');
  });

  it('the spawn form shows today against the daily budget, and once it is reached why a spawn will wait', async () => {
    // Every session is closed: the form is open by itself.
    await poll('spawn-spend', `The project has spent ${alphaToday}${unknown} of its $0.80 daily budget today (UTC).`);
    expect(await page.getByTestId('spawn-budget-wait').count()).toBe(0);
    await look('cost-spawn');
    // Another $0.40 today: $0.824 (on a Monday $1.124) of $0.80. The page follows the board's stream, no reload.
    await usage(alpha, later, new Date().toISOString(), 'claude-opus-4-8', 0.4, 100);
    const over = mondayIsToday ? '$1.12' : '$0.82';
    await poll('spawn-spend', `The project has spent ${over}${unknown} of its $0.80 daily budget today (UTC).Today's budget is used up: an agent session spawned now is stopped at its first reply and waits until someone raises the daily budget (sessions.budgetUsdPerDay in trellis.json) and resumes it, or resumes it tomorrow (the day starts at 00:00 UTC). A shell session runs no model and is not stopped.`);
    await poll('spend-today', `${over}${unknown}`);
    await poll('spend-week', `$1.12${unknown}`);
    await look('cost-spawn-over');
  });

  it("the host home shows each project's today and this week, and this machine's total; an offline project is named as not counted", async () => {
    await page.goto(gw.url);
    const over = mondayIsToday ? '$1.12' : '$0.82';
    await expect.poll(async () => (await row(alpha).getByTestId('project-spend').textContent())?.trim(), { timeout: 15_000 }).toBe(`spent ${over}${unknown} of $0.80 today · $1.12${unknown} this week`);
    // Alpha's day is over its budget: its row says so.
    expect(await row(alpha).getByTestId('project-spend').getAttribute('class')).toContain('problem');
    expect((await row(beta).getByTestId('project-spend').textContent())?.trim()).toBe('spent $2.00 today · $2.00 this week');
    expect(await row(beta).getByTestId('project-spend').getAttribute('class')).not.toContain('problem');
    expect(await row(gamma).getByTestId('project-spend').count()).toBe(0);
    // 0.824 (1.124) + 2.00 today; 1.124 + 2.00 this week.
    await poll('host-spend-today', `${mondayIsToday ? '$3.12' : '$2.82'}${unknown}`);
    await poll('host-spend-week', `$3.12${unknown}`);
    expect(await text('host-spend')).toMatch(/\(2 projects\)\. Not counted: Gamma \(its backend is not running\)\.$/);
    await look('cost-host');
    // The project's pages once over the day's budget.
    await page.goto(at(backends[0]!, '#/board'));
    await poll('spend-today', `${over}${unknown}`);
    await look('cost-board-over');
    expect(seen.errors).toEqual([]);
  });
});
