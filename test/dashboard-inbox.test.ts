import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProject } from '../src/store/trellis-home.js';
import { screenshot, desktopPage } from './helpers/browser.js';
import { json, raw, startTestGateway, type TestGateway, catalogProjects } from './helpers/gateway.js';
import { cleanupRepos, ok, ROOT, tempDir, testEnv } from './helpers/repo.js';
import { startServe, type ServeProcess } from './helpers/serve.js';
import { demoRepo } from './helpers/server.js';
import { killTmux } from './helpers/sessions.js';

/**
 * The host inbox and the counts, as a person with two projects open in one gateway sees them: a session
 * in one project starting to wait shows in the host inbox (and its tab title) without a reload, and the
 * host's counts agree with each project's own page, moving live when an issue opens.
 */

let home: string;
let a: string;
let b: string;
let sa: ServeProcess;
let sb: ServeProcess;
let gw: TestGateway;
let browser: Browser;
let page: Page;
let seen: { dialogs: string[]; errors: string[] };

const cli = (dir: string, ...args: string[]) => ok(dir, args, { env: { TRELLIS_HOME: home } });
const row = (dir: string) => page.getByTestId(`project-${encodeProject(dir)}`);

beforeAll(async () => {
  home = tempDir();
  a = await demoRepo();
  b = await demoRepo();
  writeFileSync(join(b, 'trellis.json'), JSON.stringify({ specRoot: 'specs', name: 'Bakery' }));
  catalogProjects(home, [a, b]);
  sa = await startServe(ROOT, a, { ...testEnv(a), TRELLIS_HOME: home });
  sb = await startServe(ROOT, b, { ...testEnv(b), TRELLIS_HOME: home });
  gw = await startTestGateway(home);
  ({ browser, page, seen } = await desktopPage());
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await sa?.stop('SIGKILL');
  await sb?.stop('SIGKILL');
  killTmux(home);
  cleanupRepos();
});

describe('counts agree, and move live', () => {
  it('the host row says what the project says: every open issue, live sessions by state; an issue opened by the CLI moves it without a reload', async () => {
    await page.goto(gw.url);
    await page.getByTestId('link-state').filter({ hasText: 'live' }).waitFor({ timeout: 10_000 });
    const own = (await (await fetch(new URL('/api/graph', sa.url))).json()) as { freshness: { open: number } };
    await expect.poll(() => row(a).getByTestId('open-issues').textContent(), { timeout: 15_000 }).toBe(`${own.freshness.open} open issues`);
    expect(await row(a).getByTestId('live-sessions').textContent()).toBe('0 live sessions');
    // An issue bound to no node counts too (the project's own page counts it).
    await cli(a, 'issue', 'open', 'Nothing to do with a node', '--by', 'tester');
    await expect.poll(() => row(a).getByTestId('open-issues').textContent(), { timeout: 15_000 }).toBe(`${own.freshness.open + 1} open issues`);
    expect(json(await raw(new URL('/projects', gw.url).href)).projects.find((p: { root: string }) => p.root === a).openIssues).toBe(own.freshness.open + 1);
  });
});

describe('the inbox', () => {
  it('updates live when a session in another project starts waiting: the entry, its project, what it waits for, the tab title', async () => {
    await page.goto(new URL('#/inbox', gw.url).href);
    await page.getByTestId('inbox-empty').waitFor({ timeout: 10_000 });
    // The title is set in an effect after the view renders (and this goto only changed the hash).
    await expect.poll(() => page.title()).toBe('Inbox · Trellis');
    await page.evaluate(() => ((window as unknown as { __same: boolean }).__same = true));
    const id = (await cli(b, 'session', 'spawn', 'Bake the bread', '--harness', 'shell')).trim();
    // The agent's hook says its turn ended: awaiting{turn-end}.
    // Read over b's serve (the same showSession as `session show --json`): no CLI process per look.
    await expect.poll(async () => ((await (await fetch(new URL(`/api/sessions/${encodeURIComponent(id)}`, sb.url))).json()) as { state: string }).state, { timeout: 15_000 }).toBe('running');
    await cli(b, 'session', 'signal', id, 'turn-end');
    const entry = page.locator(`[data-testid=inbox] [data-session="${id}"]`);
    await entry.waitFor({ timeout: 15_000 });
    expect(await entry.locator('.chip.project').textContent()).toBe('Bakery');
    expect(await entry.getByTestId('waits-for').textContent()).toBe('turn-end');
    expect(await entry.locator('time').textContent()).toBe('just now');
    await expect.poll(() => page.title()).toBe('(1) Inbox · Trellis');
    expect(await page.getByTestId('inbox-count').textContent()).toBe('1');
    expect(await page.evaluate(() => (window as unknown as { __same?: boolean }).__same)).toBe(true);
    await screenshot(page, 'host-inbox');

    // One click: the session's page in its project, through the gateway.
    await entry.getByRole('link', { name: 'Open terminal' }).click();
    await expect.poll(() => page.url()).toBe(new URL(`/p/${encodeProject(b)}/#/sessions/${id}`, gw.url).href);
    await page.getByTestId('session-state').first().waitFor({ timeout: 10_000 });

    // The project's own inbox has it; the other project's does not.
    await page.goto(new URL(`/p/${encodeProject(b)}/#/inbox`, gw.url).href);
    await page.locator(`[data-testid=inbox] [data-session="${id}"]`).waitFor({ timeout: 10_000 });
    expect(await page.getByTestId('project-name').textContent()).toBe('Bakery');
    await page.goto(new URL(`/p/${encodeProject(a)}/#/inbox`, gw.url).href);
    await page.getByTestId('inbox-empty').waitFor({ timeout: 10_000 });

    // Back on the host: the session leaves the inbox once it runs again.
    await page.goto(new URL('#/inbox', gw.url).href);
    await page.locator(`[data-testid=inbox] [data-session="${id}"]`).waitFor({ timeout: 10_000 });
    await cli(b, 'session', 'close', id);
    await page.getByTestId('inbox-empty').waitFor({ timeout: 15_000 });
    expect(seen.errors).toEqual([]);
  });
});
