import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { desktopPage, VIEWPORTS, scrollTo } from './helpers/browser.js';
import { cleanupRepos, ok, ROOT, tempDir } from './helpers/repo.js';
import { packageCopy, startServe, type ServeProcess } from './helpers/serve.js';
import { killTmux } from './helpers/sessions.js';

/*
 * The README's five-minute tour, walked as a newcomer would, in a real Chromium against a real
 * `trellis serve` started outside any project (so it serves the bundled demo) with NO agent installed:
 * the serve's PATH has no claude, codex or opencode, so the demo's default harness ("auto") is `shell`.
 * Open an issue in the page → start a session on it → type the change into its terminal and commit it →
 * run its checks → request review (the review bundle) → merge by running exactly the commands the page
 * shows in the main checkout → the session closed and the rule on trunk. Every view is screenshot at
 * 1280×800 during the walk, then again at 390×844.
 */

const SHOTS = join(ROOT, 'test-results', 'screens-34', 'demo');
const RULE = 'Back-orders: taken when out of stock, shipped when restocked.';

let home: string;
let s: ServeProcess;
let browser: Browser;
let page: Page;
let seen: { dialogs: string[]; errors: string[] };
let demo: string;
const views: string[] = [];
/** What a person does in the walk: every click and every field typed into, counted as the test does them. */
const tally = { clicks: 0, typed: 0 };

const shot = async (name: string) => {
  mkdirSync(SHOTS, { recursive: true });
  const vp = page.viewportSize()!;
  await page.screenshot({ path: join(SHOTS, `${name}-${vp.width}x${vp.height}.png`) });
};
const click = async (l: ReturnType<Page['locator']>) => {
  tally.clicks++;
  await l.click();
};
const fill = async (l: ReturnType<Page['locator']>, text: string) => {
  tally.typed++;
  await l.fill(text);
};
const live = () => page.getByTestId('link-state').filter({ hasText: 'live' }).waitFor({ timeout: 15_000 });

beforeAll(async () => {
  home = tempDir();
  // Nothing else installed: the agents this package's devDependencies put in node_modules/.bin are off PATH.
  const PATH = (process.env.PATH ?? '').split(delimiter).filter((d) => !d.includes('node_modules')).join(delimiter);
  const env: NodeJS.ProcessEnv = { ...process.env, PATH, TRELLIS_HOME: home, TRELLIS_DRAIN_MS: '300' };
  delete env.TRELLIS_SESSION;
  s = await startServe(packageCopy(), tempDir(), env);
  demo = join(home, 'demo', 'leaf-and-kettle');
  ({ browser, page, seen } = await desktopPage());
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await s?.stop('SIGKILL');
  killTmux(home);
  cleanupRepos();
});

describe('the five-minute tour on the demo, in the page', () => {
  it('issue → session (shell, the default with no agent installed) → change typed and committed → checks → review → merged as the page says', async () => {
    expect(s.errLines.join('\n')).toContain(`serving a fresh copy of the demo project at ${demo}`);
    // Step 1: the page the serve printed.
    await page.goto(s.url);
    await live();
    // No zero badges: a node without open issues shows none (the demo's board has such nodes).
    await page.locator('.tree .badge').first().waitFor({ state: 'attached' });
    expect(await page.locator('.tree .badge').count()).toBe(await page.locator('.tree [data-node]').count());
    expect(await page.locator('.tree .badge').allTextContents()).not.toContain('0');
    await shot('board');
    views.push('board');

    // Step 2: open an issue.
    await click(page.getByRole('link', { name: 'Issues' }).first());
    await click(page.getByRole('link', { name: 'Open an issue' }));
    await fill(page.getByLabel('Concern (one line)'), 'Inventory has no rule for back-orders');
    await fill(page.getByLabel('Add a node'), 'ops/inventory');
    await click(page.getByRole('button', { name: 'Add', exact: true }));
    await shot('new-issue');
    views.push('new-issue');
    await click(page.getByRole('button', { name: 'Open issue' }));
    await expect.poll(() => page.url()).toMatch(/#\/issues\/[^/?]+$/);
    const issue = decodeURIComponent(/#\/issues\/([^/?]+)$/.exec(page.url())![1]!);
    await shot('issue');
    views.push('issue');

    // Step 3: a session on it; the form is filled from the issue and says what "project default" means here.
    await click(page.getByTestId('spawn-for-issue'));
    await page.getByTestId('harness-default').waitFor();
    expect(await page.getByTestId('harness-default').textContent()).toBe(
      'Default here: shell (a terminal you type into yourself). The project asks for the first installed agent, and none is installed on this machine.',
    );
    const harness = page.getByLabel('Harness');
    expect(await harness.inputValue()).toBe('');
    expect(await harness.locator('option').evaluateAll((os) => os.map((o) => `${o.textContent}${(o as HTMLOptionElement).disabled ? ' [disabled]' : ''}`))).toEqual([
      'project default: shell',
      'shell',
      'claude (not installed) [disabled]',
      'codex (not installed) [disabled]',
      'opencode (not installed) [disabled]',
      'gemini (not installed) [disabled]',
    ]);
    expect(await page.getByLabel('Task').inputValue()).toBe('Inventory has no rule for back-orders');
    expect(await page.getByLabel('Issue').inputValue()).toBe(issue);
    expect(await page.getByLabel('Nodes (space separated)').inputValue()).toBe('ops/inventory');
    await shot('spawn');
    views.push('spawn');
    await click(page.getByRole('button', { name: 'Spawn' }));
    await expect.poll(() => page.url()).toMatch(/#\/sessions\/[^/?]+$/);
    const id = decodeURIComponent(/#\/sessions\/([^/?]+)$/.exec(page.url())![1]!);
    const shown = JSON.parse(await ok(demo, ['session', 'show', id, '--json'], { env: { TRELLIS_HOME: home } })) as { harness: string; issue: string; branch: string };
    expect(shown).toMatchObject({ harness: 'shell', issue });

    // Step 4: watch it, and do the work as a person would: typed into its terminal, committed.
    await expect.poll(() => page.getByTestId('pane-state').textContent({ timeout: 1_000 }).catch(() => null), { timeout: 20_000 }).toBe('live');
    await click(page.locator('.terminal-frame .xterm'));
    tally.typed++;
    await page.keyboard.type(`printf '%s\\n' '${RULE}' >> specs/ops/inventory.md && git commit -qam 'Inventory: the back-orders rule' && echo committed-ok`);
    await page.keyboard.press('Enter');
    const rows = () => page.locator('.xterm-rows > div').evaluateAll((els) => els.map((e) => (e.textContent ?? '').trim()));
    await expect.poll(async () => (await rows()).includes('committed-ok'), { timeout: 20_000 }).toBe(true);
    await shot('session');
    views.push('session');

    // Step 5: its checks, then review: the bundle says it is ready, and the page shows how to merge it.
    await click(page.getByRole('button', { name: 'Run checks' }));
    await expect.poll(() => page.getByTestId('checks-line').textContent({ timeout: 1_000 }).catch(() => null), { timeout: 30_000 }).toMatch(/^Ready to merge/);
    // Every state the page's header shows from here on: an action's answer must not flicker back to the
    // state before it when the next read lands (it did: the answer was dropped a render before the read).
    await page.evaluate(() => {
      const seen: string[] = ((window as unknown as { statesSeen: string[] }).statesSeen = []);
      const note = () => {
        const t = document.querySelector('[data-testid="session-state"]')?.textContent?.trim() ?? '';
        if (t && seen.at(-1) !== t) seen.push(t);
      };
      note();
      new MutationObserver(note).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    const reread = page.waitForResponse((r) => r.request().method() === 'GET' && new URL(r.url()).pathname === `/api/sessions/${id}`);
    await click(page.getByRole('button', { name: 'Request review' }));
    await page.getByTestId('merge-by-hand').waitFor({ timeout: 15_000 });
    await reread;
    await page.evaluate(() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done))));
    const states = await page.evaluate(() => (window as unknown as { statesSeen: string[] }).statesSeen);
    const fromReview = states.slice(states.findIndex((t) => t.startsWith('review')));
    expect({ states, back: fromReview.filter((t) => !t.startsWith('review')) }).toMatchObject({ back: [] });
    expect(await page.getByTestId('preflight').textContent()).toContain('merges cleanly');
    expect(await page.locator('.review').textContent()).toContain('Inventory: the back-orders rule');
    await scrollTo(page.locator('.review'));
    await shot('review');
    views.push('review');
    await scrollTo(page.getByTestId('merge-by-hand'));
    await shot('merge-by-hand');

    // Before the merge, closing the issue "as fixed by" the session is refused, saying why.
    const early = await fetch(new URL(`/api/issues/${encodeURIComponent(issue)}/close`, s.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ session: id }) });
    expect([early.status, ((await early.json()) as { error: { message: string } }).error.message]).toEqual([409, `session ${id}'s branch ${shown.branch} is not in main: merge it first, or close the issue without naming the session`]);

    // Step 6: merge, exactly as the page says, in the main checkout (the demo's folder).
    // The card names the main checkout by its absolute path and merges with no editor (--no-edit).
    const commands = (await page.getByTestId('merge-commands').textContent())!.split('\n').filter(Boolean);
    expect(commands).toEqual([`git -C ${demo} switch main`, `git -C ${demo} merge --no-ff --no-edit ${shown.branch}`]);
    for (const line of commands) {
      const [program, ...args] = line.split(' ');
      expect(program).toBe('git');
      execFileSync('git', args, { cwd: home, stdio: 'pipe' });
    }
    // Merged, not yet closed: the page stops offering the merge (its commands, Request review) and says why.
    await page.getByTestId('merge-by-hand').waitFor({ state: 'detached', timeout: 15_000 });
    expect(await page.getByTestId('not-offered').textContent()).toContain('Merge: its branch is already in trunk. Close the session to finish it.');
    expect(await page.getByRole('button', { name: 'Close', exact: true }).count()).toBe(1);
    // Then the session closed, as the CLI's refusal of its merge says (trellis session close <id>).
    await ok(demo, ['session', 'close', id], { env: { TRELLIS_HOME: home } });
    expect(readFileSync(join(demo, 'specs/ops/inventory.md'), 'utf8')).toContain(RULE);
    await expect.poll(() => page.getByTestId('session-state').first().textContent(), { timeout: 15_000 }).toMatch(/^closed/);
    // Merged: the bundle says so in words, at trunk's merge commit, and no verdict or action that only
    // applies before a merge ("Not ready to merge", "trunk moved ahead", a pre-flight) is left.
    const mergeCommit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: demo, encoding: 'utf8' }).trim();
    await expect
      .poll(() => page.getByTestId('checks-line').textContent({ timeout: 1_000 }).catch(() => null), { timeout: 15_000 })
      .toBe(`Merged into main at ${mergeCommit.slice(0, 10)}.`);
    // The branch's readings at its last commit stay, with no verdict against a trunk that now holds it.
    expect(await page.locator('.merged-readings tbody tr').evaluateAll((rows) => rows.map((r) => (r.textContent ?? '').trim()))).toEqual(['ops/inventory/back-orderspass', 'ops/inventory/stock-in-gramspass']);
    expect(await page.getByTestId('preflight').textContent()).toBe(`In main since ${mergeCommit.slice(0, 10)}: merged`);
    expect(await page.locator('.review').textContent()).not.toMatch(/Not ready|moved ahead|merges cleanly|unmeasured|not measured at the tip/);
    expect(await page.getByTestId('merge-by-hand').count()).toBe(0);
    await shot('merged');
    views.push('merged');

    // Its issue is still open (merging closes nothing by itself): the page says so and offers to close it,
    // asking first; the issue's timeline then names the session whose merged change closed it.
    await scrollTo(page.getByTestId('fixed-issue'));
    expect(await page.getByTestId('fixed-issue').textContent()).toContain('is still open');
    await click(page.getByRole('button', { name: 'Close the issue' }));
    await shot('close-issue');
    await click(page.getByRole('button', { name: 'Yes, close the issue' }));
    await expect.poll(() => page.getByTestId('fixed-issue').textContent(), { timeout: 15_000 }).toBe('Its issue Inventory has no rule for back-orders is closed.');
    // The bundle, read again, no longer lists it among the changed node's open issues.
    await expect.poll(() => page.locator('.review .chip.status-open').count(), { timeout: 15_000 }).toBe(0);
    const closed = (await (await fetch(new URL(`/api/issues/${encodeURIComponent(issue)}`, s.url))).json()) as { status: string };
    expect(closed.status).toBe('landed');
    // Who closed it, with which session: the issue's timeline, a read of its own.
    const timeline = (await (await fetch(new URL(`/api/issues/${encodeURIComponent(issue)}/timeline`, s.url))).json()) as { events: { type: string; session?: string }[] };
    expect(timeline.events.at(-1)).toMatchObject({ type: 'closed', session: id });
    await click(page.getByTestId('fixed-issue').getByRole('link'));
    const closedEvent = page.locator('[data-event="closed"]');
    await expect.poll(() => closedEvent.textContent({ timeout: 1_000 }).catch(() => null), { timeout: 15_000 }).toMatch(new RegExp(`closed this issue with session ${id}, whose change is merged`));
    await shot('issue-closed');
    views.push('issue-closed');
    await page.goBack();

    // Merged: the node on trunk carries the rule, and its failing scenario's definition now finds it.
    await click(page.getByRole('link', { name: 'ops/inventory' }).first());
    await expect.poll(() => page.locator('main').textContent(), { timeout: 15_000 }).toContain(RULE);
    await shot('node');
    views.push('node');
    expect(seen.errors).toEqual([]);
    expect(seen.dialogs).toEqual([]);
    // The count for the note (README's tour): clicks and fields a person uses, from the first page on.
    console.log(`tour: ${tally.clicks} clicks, ${tally.typed} fields typed into, 2 commands in the main checkout`);
    expect(tally).toEqual({ clicks: 13, typed: 3 });

    // A project whose default agent is not installed here: the form says so and picks what can start.
    writeFileSync(join(demo, 'trellis.local.json'), JSON.stringify({ harness: 'claude' }));
    await page.goto(new URL('#/sessions', s.url).href);
    await live();
    await expect.poll(() => page.getByTestId('harness-default').textContent({ timeout: 1_000 }).catch(() => null), { timeout: 10_000 }).toBe(
      "This project's default, claude, is not installed on this machine, so it cannot start here; shell is picked instead.",
    );
    await expect.poll(() => page.getByLabel('Harness').inputValue()).toBe('shell');
    expect(await page.getByLabel('Harness').locator('option').first().evaluate((o) => [o.textContent, (o as HTMLOptionElement).disabled])).toEqual(['project default: claude (not installed)', true]);
    await shot('spawn-not-installed');
    unlinkSync(join(demo, 'trellis.local.json'));

    // The same views at a phone's width: each fits without sideways scrolling.
    await page.setViewportSize(VIEWPORTS.phone);
    for (const [name, hash] of [
      ['board', '#/board'],
      ['issue', `#/issues/${issue}`],
      ['spawn', `#/sessions?issue=${issue}`],
      ['session', `#/sessions/${id}`],
      ['node', '#/node/ops/inventory'],
    ] as const) {
      await page.goto(new URL(hash, s.url).href);
      await live();
      // The closed session's page loads its bundle by itself: merged, and its issue closed.
      if (name === 'session') await page.getByTestId('fixed-issue').filter({ hasText: 'is closed' }).waitFor({ timeout: 15_000 });
      await shot(name);
      expect(await page.evaluate(() => document.documentElement.scrollWidth), name).toBeLessThanOrEqual(VIEWPORTS.phone.width);
    }
    expect(views).toHaveLength(9);
  }, 180_000);
});
