import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProject } from '../src/store/trellis-home.js';
import { VIEWPORTS, desktopPage } from './helpers/browser.js';
import { startTestGateway, type TestGateway, catalogProjects } from './helpers/gateway.js';
import { cleanupRepos, git, ok, ROOT, tempDir, testEnv, trellis } from './helpers/repo.js';
import { startServe, type ServeProcess } from './helpers/serve.js';
import { demoRepo } from './helpers/server.js';
import { killTmux, tmux } from './helpers/sessions.js';

/**
 * The dead ends a newcomer met (issue 20), each as a person meets it in a real Chromium against a real
 * `trellis serve` (and, for the phone, through a real gateway): a failed eval explained, a malformed
 * trellis.json said on every view, a history entry that visibly shows the old version, and 390 px that
 * never scrolls sideways.
 */

let dir: string;
let home: string;
let s: ServeProcess;
let gw: TestGateway;
let browser: Browser;
let page: Page;
let seen: { dialogs: string[]; errors: string[] };
/** Screenshots of the views issue 34 changed (not committed). */
const SHOTS34 = join(ROOT, 'test-results', 'screens-34', 'term');

const cli = (...args: string[]) => ok(dir, args, { env: { TRELLIS_HOME: home } });
const open = async (hash: string, base = s.url) => {
  await page.goto(new URL(hash, base).href);
  await page.getByTestId('link-state').filter({ hasText: 'live' }).waitFor({ timeout: 10_000 });
};
/** How much wider than the viewport the page is (0: it fits). */
const overflow = () =>
  page.evaluate(() => {
    const over = document.documentElement.scrollWidth - window.innerWidth;
    if (over <= 0) return 0;
    // Name the widest element, so a failure says what to fix.
    const wide = [...document.querySelectorAll('main *, header *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1);
    return `${over} px: ${wide.slice(-3).map((e) => `${e.tagName.toLowerCase()}.${e.className}`).join(', ')}`;
  });

beforeAll(async () => {
  dir = await demoRepo();
  home = tempDir();
  catalogProjects(home, [dir]);
  s = await startServe(ROOT, dir, { ...testEnv(dir), TRELLIS_HOME: home });
  gw = await startTestGateway(home);
  ({ browser, page, seen } = await desktopPage());
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await s?.stop('SIGKILL');
  killTmux(home);
  cleanupRepos();
});

describe('1. a failed eval can be explained', () => {
  it('eval run prints an output hash that evidence get takes', async () => {
    const line = (await cli('eval', 'run', 'ops/inventory/back-orders', '--by', 'ana')).trim();
    const hash = /output ([0-9a-f]+)/.exec(line)?.[1];
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(await cli('evidence', 'get', hash!)).toContain("no 'Back-orders:' rule yet");
  });

  it('the fail chip opens the detail: its state, the output, its history, and Run files a new reading', async () => {
    await open('#/eval');
    const chip = page.locator('tr[data-scenario="ops/inventory/back-orders"] [data-testid=outcome]').first();
    await chip.click();
    await expect.poll(() => page.url()).toContain('#/eval/ops/inventory/back-orders?scope=trunk');
    await expect.poll(() => page.getByTestId('reading-output').textContent()).toContain("no 'Back-orders:' rule yet");
    await expect.poll(() => page.getByTestId('latest-reading').textContent()).toContain('fail');
    expect(await page.getByTestId('readings').locator('li').count()).toBe(1);
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await expect.poll(() => page.getByTestId('readings').locator('li').count(), { timeout: 20_000 }).toBe(2);
    expect(await page.locator('h2', { hasText: 'History' }).textContent()).toContain('2 readings');
    expect(seen.errors).toEqual([]);
  });
});

describe('3. history shows the old version', () => {
  it('a history entry puts that version’s own text at the top of the view, scrolled to, with its diff', async () => {
    const file = join(dir, 'specs/checkout/payment.md');
    const before = readFileSync(file, 'utf8');
    writeFileSync(file, before.replace(/\n## /, '\nA sentence that only today’s text has.\n\n## '));
    git(dir, 'commit', '-qam', 'payment: a sentence for today');
    await page.setViewportSize(VIEWPORTS.desktop);
    await open('#/node/checkout/payment');
    await page.getByTestId('node-body').filter({ hasText: 'A sentence that only today' }).waitFor();
    // The second entry is the version before today's commit.
    await page.locator('.timeline a').nth(1).click();
    const version = page.getByTestId('version');
    await version.waitFor();
    await expect.poll(() => page.getByTestId('version-text').textContent()).toBeTruthy();
    expect(await page.getByTestId('version-text').textContent()).not.toContain('A sentence that only today');
    // Visible without scrolling: its top is within the viewport.
    const box = await version.boundingBox();
    expect(box!.y).toBeGreaterThanOrEqual(0);
    expect(box!.y).toBeLessThan(VIEWPORTS.desktop.height / 2);
    expect(await version.locator('.diff').count()).toBe(1);

    // On a phone the sticky header is ~140 px tall: the version's heading and "Back to today" land below it.
    // (The history list sits far down the phone's single column: clicking it scrolls the version into view.)
    await page.setViewportSize(VIEWPORTS.phone);
    await open('#/node/checkout/payment');
    await page.getByTestId('node-body').filter({ hasText: 'A sentence that only today' }).waitFor();
    await page.locator('.timeline a').nth(1).click();
    await page.getByTestId('version-text').waitFor();
    const below = async () => {
      const header = await page.locator('header.top').boundingBox();
      const heading = await page.locator('#version-h').boundingBox();
      const back = await version.getByRole('link', { name: 'Back to today' }).boundingBox();
      return [heading!.y - (header!.y + header!.height), back!.y - (header!.y + header!.height)].every((gap) => gap >= 0);
    };
    await expect.poll(below, { timeout: 5_000 }).toBe(true);
    mkdirSync(SHOTS34, { recursive: true });
    await page.screenshot({ path: join(SHOTS34, 'node-version-390x844.png') });
    await page.setViewportSize(VIEWPORTS.desktop);
    await open('#/node/checkout/payment');
    await page.locator('.timeline a').nth(1).click();
    await page.getByTestId('version-text').waitFor();
    await expect.poll(below, { timeout: 5_000 }).toBe(true);
    await page.screenshot({ path: join(SHOTS34, 'node-version-1280x800.png') });
  });
});

describe('4. 390 px never overflows', () => {
  const views = ['#/board', '#/node/checkout/payment', '#/issues', '#/sessions', '#/eval', '#/eval/ops/inventory/back-orders?scope=trunk', '#/new-issue'];

  it('every view, a version diff and an open issue thread fit, directly and through the gateway', async () => {
    await page.setViewportSize(VIEWPORTS.phone);
    const issue = JSON.parse(await cli('issue', 'open', 'A long concern '.repeat(6), '--body', `a-very-long-unbroken-word-${'x'.repeat(120)}`, '--by', 'tester', '--json')).id as string;
    const hash = git(dir, 'log', '-1', '--format=%H', '--', 'specs/checkout/payment.md').trim();
    const all = [...views, `#/node/checkout/payment?v=${hash}`, `#/issues/${issue}`];
    for (const base of [s.url, new URL(`/p/${encodeProject(dir)}/`, gw.url).href]) {
      for (const v of all) {
        await open(v, base);
        await page.locator('main h1, main .card, main .tree').first().waitFor();
        if (v.includes('?v=')) await page.getByTestId('version-text').waitFor();
        // Polled briefly: a view settles as its fetches land; one that stays too wide fails with its culprit.
        await expect.poll(async () => [v, base, await overflow()], { timeout: 15_000 }).toEqual([v, base, 0]);
      }
    }
    // The Eval tab is on screen through the gateway.
    const tab = await page.locator('header nav a', { hasText: 'Eval' }).boundingBox();
    expect(tab!.x + tab!.width).toBeLessThanOrEqual(VIEWPORTS.phone.width);
    await page.setViewportSize(VIEWPORTS.desktop);
  });
});

describe('2. a malformed trellis.json', () => {
  it('is said on every view with its file, line and repair (500 CONFIG_INVALID); issue verbs keep working', async () => {
    const config = join(dir, 'trellis.json');
    const good = readFileSync(config, 'utf8');
    await open('#/board');
    writeFileSync(config, '{\n  "specRoot": "specs",\n  oops\n}\n');
    try {
      const res = await fetch(new URL('/api/graph', s.url));
      expect(res.status).toBe(500);
      expect((await res.json()).error).toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringMatching(/trellis\.json line 3, column 3 is not valid JSON.*repair/) });
      // The board stops waiting and says why, within a few seconds.
      const banner = page.getByTestId('config-error');
      await banner.waitFor({ timeout: 15_000 });
      expect(await banner.textContent()).toMatch(/trellis\.json line 3, column 3.*repair: fix that line/);
      for (const v of ['#/issues', '#/sessions', '#/eval']) {
        // A fresh load each time: after a hash-only goto the previous view's banner would still be there.
        await page.goto('about:blank');
        await page.goto(new URL(v, s.url).href);
        await banner.waitFor({ timeout: 15_000 });
      }
      // The issue list still lists; the CLI opens and lists issues.
      await page.goto(new URL('#/issues', s.url).href);
      await page.locator('.issue-list li').first().waitFor();
      const opened = await trellis(dir, ['issue', 'open', 'Works despite the config', '--by', 'tester'], { env: { TRELLIS_HOME: home } });
      expect(opened.code).toBe(0);
      const ls = await trellis(dir, ['issue', 'ls'], { env: { TRELLIS_HOME: home } });
      expect([ls.code, ls.stdout]).toEqual([0, expect.stringContaining('Works despite the config')]);
      expect(ls.stderr).toMatch(/forge issues are not listed: .*line 3, column 3/);
    } finally {
      writeFileSync(config, good);
    }
    // Fixed: the page recovers by itself.
    await page.goto(new URL('#/board', s.url).href);
    await page.locator('.tree .row').first().waitFor({ timeout: 15_000 });
    await expect.poll(() => page.getByTestId('config-error').count(), { timeout: 10_000 }).toBe(0);
  });
});

describe('6. a phone does not resize everyone’s terminal, and a watcher reads it', () => {
  /**
   * How the terminal reads in `p`: xterm's font size and rendered cell in CSS px, whether the page (not the
   * frame) scrolls sideways, whether the frame can scroll to the pane's last column, and whether the pane's
   * last row is inside the frame's box without scrolling it (what a watcher looks for: the prompt).
   */
  const reading = (p: Page) =>
    p.evaluate(() => {
      const rows = document.querySelector<HTMLElement>('.terminal-frame .xterm-rows')!;
      const screen = document.querySelector<HTMLElement>('.terminal-frame .xterm-screen')!;
      const frame = document.querySelector<HTMLElement>('.terminal-frame')!;
      const [cols, lines] = (document.querySelector('.terminal-head .size')?.textContent ?? '0×0').split('×').map(Number);
      const s = screen.getBoundingClientRect();
      const f = frame.getBoundingClientRect();
      return {
        font: parseFloat(getComputedStyle(rows).fontSize),
        cellW: s.width / cols!,
        cellH: s.height / lines!,
        pageOver: document.documentElement.scrollWidth - innerWidth,
        allColumnsReachable: frame.scrollWidth >= s.width,
        // The whole pane's height shows without scrolling the frame (the page scrolls instead): the prompt is never hidden.
        lastRowInFrame: s.bottom <= f.bottom + 1,
        paneShown: `${cols}x${lines}`,
      };
    });

  it('a viewer that only looks keeps the pane’s size and reads it at ≥ 12 px (desktop) / ≥ 11 px (phone), the frame scrolling sideways, never the page; once it types, the pane takes its size', async () => {
    const id = (await cli('session', 'spawn', 'Watch the pane', '--harness', 'shell')).trim();
    const paneSize = () => tmux(home, 'display-message', '-p', '-t', `=${id}:`, '#{pane_width}x#{pane_height}')?.trim();
    const paneCols = () => Number(paneSize()!.split('x')[0]);
    mkdirSync(SHOTS34, { recursive: true });
    // A screenful as an agent fills it: 45 lines about 190 columns wide, numbered, the last one last.
    const fox = 'the quick brown fox jumps over the lazy dog '.repeat(4);
    tmux(home, 'send-keys', '-t', `=${id}:`, '-l', `clear; seq -w 1 45 | sed 's/$/ ${fox}end/'`);
    tmux(home, 'send-keys', '-t', `=${id}:`, 'Enter');
    await page.setViewportSize(VIEWPORTS.desktop);
    await open(`#/sessions/${id}`);
    await expect.poll(() => page.getByTestId('pane-state').textContent(), { timeout: 10_000 }).toBe('live');
    // Looking is not typing: the pane keeps tmux's own size (200×50), shown readable.
    const before = paneSize()!;
    await expect.poll(async () => (await reading(page)).paneShown, { timeout: 10_000 }).toBe(before);
    await page.locator('.xterm-rows > div', { hasText: /^45 the quick/ }).waitFor({ timeout: 10_000 });
    const desk = await reading(page);
    expect(paneSize()).toBe(before);
    expect(desk.font).toBeGreaterThanOrEqual(12);
    expect(desk.cellH).toBeGreaterThanOrEqual(12);
    expect(desk.pageOver).toBeLessThanOrEqual(0);
    expect(desk.allColumnsReachable).toBe(true);
    expect(await page.getByTestId('pane-scrolls').textContent()).toBe('↔ scroll sideways');
    expect(desk.lastRowInFrame).toBe(true);
    await page.screenshot({ path: join(SHOTS34, 'terminal-watcher-1280x800.png') });
    await page.locator('.terminal-frame .xterm').click();
    await page.keyboard.type('echo wide');
    await expect.poll(paneCols, { timeout: 15_000 }).toBeGreaterThan(100);
    const wide = paneSize()!;
    expect(wide).not.toBe(before);
    // The typist's pane fits its frame: the last row (the prompt) is not clipped by the frame's edge.
    await expect.poll(async () => (await reading(page)).paneShown, { timeout: 10_000 }).toBe(wide);
    expect((await reading(page)).lastRowInFrame).toBe(true);
    await page.screenshot({ path: join(SHOTS34, 'terminal-typist-1280x800.png') });

    const phone = await browser.newPage({ viewport: VIEWPORTS.phone });
    try {
      await phone.goto(new URL(`#/sessions/${id}`, s.url).href);
      await expect.poll(() => phone.getByTestId('pane-state').textContent(), { timeout: 10_000 }).toBe('live');
      // The phone shows the pane at the typist's size (the label says so) and the pane did not shrink.
      await expect.poll(async () => (await reading(phone)).paneShown, { timeout: 15_000 }).toBe(wide);
      await phone.locator('.xterm-rows > div', { hasText: /^45 the quick/ }).waitFor({ timeout: 10_000 });
      const small = await reading(phone);
      expect(paneSize()).toBe(wide);
      expect(small.font).toBeGreaterThanOrEqual(11);
      expect(small.cellH).toBeGreaterThanOrEqual(11);
      expect(small.pageOver).toBeLessThanOrEqual(0);
      expect(small.allColumnsReachable).toBe(true);
      expect(await phone.getByTestId('pane-scrolls').count()).toBe(1);
      expect(small.lastRowInFrame).toBe(true);
      await phone.screenshot({ path: join(SHOTS34, 'terminal-watcher-390x844.png') });
      await phone.locator('.terminal-frame').scrollIntoViewIfNeeded();
      await phone.screenshot({ path: join(SHOTS34, 'terminal-watcher-scrolled-390x844.png') });
      // The phone types: now it is the one at the keyboard, and the pane fits it.
      await phone.locator('.terminal-frame .xterm').click();
      await phone.keyboard.type('x');
      await expect.poll(paneCols, { timeout: 15_000 }).toBeLessThan(60);
      // The typist's pane fits its frame: nothing to scroll sideways.
      await expect.poll(() => phone.getByTestId('pane-scrolls').count()).toBe(0);
      expect((await reading(phone)).pageOver).toBeLessThanOrEqual(0);
      await phone.screenshot({ path: join(SHOTS34, 'terminal-typist-390x844.png') });
    } finally {
      await phone.close();
      await cli('session', 'close', id);
    }
  });
});

describe('7. a queued session says why it waits', () => {
  it('names the budget that holds it: 1 of 1 running', async () => {
    const config = join(dir, 'trellis.json');
    const good = readFileSync(config, 'utf8');
    writeFileSync(config, JSON.stringify({ ...JSON.parse(good), sessions: { max: 1 } }));
    const first = (await cli('session', 'spawn', 'Take the slot', '--harness', 'shell')).trim();
    const second = (await cli('session', 'spawn', 'Wait for the slot', '--harness', 'shell')).trim();
    try {
      await page.setViewportSize(VIEWPORTS.desktop);
      await open('#/sessions');
      const row = page.locator(`[data-session="${second}"]`);
      await expect.poll(() => row.getByTestId('session-state').textContent(), { timeout: 10_000 }).toMatch(/^queued/);
      await expect.poll(() => row.getByTestId('queued-reason').textContent(), { timeout: 15_000 }).toBe('waiting for a slot: 1 of 1 running');
    } finally {
      await cli('session', 'close', second);
      await cli('session', 'close', first);
      writeFileSync(config, good);
    }
  });
});

describe('8. the board sees a node that exists only in a worktree', () => {
  it('lists it with its title and a link to the session that adds it; its node page says where it comes from', async () => {
    const id = (await cli('session', 'spawn', 'Draft the wish list', '--harness', 'shell')).trim();
    try {
      const worktree = JSON.parse(await cli('session', 'show', id, '--json')).worktree as string;
      writeFileSync(join(worktree, 'specs/checkout/wishlist.md'), '---\ntitle: Wish list\n---\n# Wish list\n\nA shopper keeps items for later.\n');
      mkdirSync(SHOTS34, { recursive: true });
      for (const vp of [VIEWPORTS.desktop, VIEWPORTS.phone]) {
        await page.setViewportSize(vp);
        await open('#/board');
        const row = page.locator('[data-worktree-node="checkout/wishlist"]');
        await row.waitFor({ timeout: 15_000 });
        expect(await row.locator('.title').textContent()).toBe('Wish list');
        const origin = row.getByTestId('origin-checkout/wishlist');
        expect(await origin.textContent()).toBe('Draft the wish list');
        expect(await origin.getAttribute('href')).toBe(`#/sessions/${id}`);
        expect(await page.locator('.toolbar .muted').textContent()).toContain('1 new node not yet on trunk');
        // Also under its parent in the tree, marked new, its origin linking the session.
        const inTree = page.locator('.tree[role=tree] [data-fresh-node="checkout/wishlist"]');
        expect(await inTree.locator('.title').textContent()).toBe('Wish list');
        expect(await inTree.locator('.chip.worktree').textContent()).toContain('new');
        expect(await inTree.getByTestId('origin-checkout/wishlist').getAttribute('href')).toBe(`#/sessions/${id}`);
        const levels = await page.locator('.tree[role=tree] > li').evaluateAll((lis) => lis.map((li) => [li.getAttribute('data-node') ?? li.getAttribute('data-fresh-node'), Number(li.getAttribute('aria-level'))] as const));
        const parent = levels.findIndex(([n]) => n === 'checkout');
        const at = levels.findIndex(([n]) => n === 'checkout/wishlist');
        expect(parent).toBeGreaterThanOrEqual(0);
        expect(at).toBeGreaterThan(parent);
        expect(levels[at]![1]).toBe(levels[parent]![1] + 1);
        expect(levels.slice(parent + 1, at).every(([, level]) => level > levels[parent]![1])).toBe(true);
        expect(await overflow()).toBe(0);
        await page.screenshot({ path: join(SHOTS34, `board-worktree-node-${vp.width}x${vp.height}.png`) });
        // The board's search finds it by its title and by its id, marked new.
        for (const q of ['wish list', 'checkout/wishlist']) {
          await open(`#/board?q=${encodeURIComponent(q)}`);
          const hit = page.locator('.list [data-fresh-node="checkout/wishlist"]');
          await hit.waitFor();
          expect(await hit.locator('.title').textContent()).toBe('Wish list');
          expect(await hit.locator('.chip.worktree').textContent()).toContain('new');
          expect(await overflow()).toBe(0);
        }
        await page.screenshot({ path: join(SHOTS34, `board-search-worktree-node-${vp.width}x${vp.height}.png`) });
        await open('#/board');
        // Its page: not "no such node", but where it comes from, and its text as the worktree adds it.
        await row.locator('a.node-link').click();
        const nodePage = page.getByTestId('worktree-only-node');
        await nodePage.waitFor();
        expect(await nodePage.locator('h1').textContent()).toBe('Wish list');
        expect(await nodePage.locator('.notice').textContent()).toBe('This node is not on trunk yet: it was added in session Draft the wish list. It joins the board’s tree when that work is merged.');
        expect(await nodePage.getByRole('link', { name: 'Draft the wish list' }).getAttribute('href')).toBe(`#/sessions/${id}`);
        await expect.poll(() => nodePage.locator('.diff').textContent(), { timeout: 10_000 }).toContain('A shopper keeps items for later.');
        expect(await overflow()).toBe(0);
        await page.screenshot({ path: join(SHOTS34, `node-worktree-only-${vp.width}x${vp.height}.png`), fullPage: true });
      }
    } finally {
      await page.setViewportSize(VIEWPORTS.desktop);
      await cli('session', 'close', id);
    }
  });
});
