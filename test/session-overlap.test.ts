import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OverlapIndex } from '../src/projections/overlap.js';
import { desktopPage } from './helpers/browser.js';
import { cleanupRepos, git, ok, tempDir, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { packageCopy, startServe, type ServeProcess } from './helpers/serve.js';
import { killTmux, waitFor } from './helpers/sessions.js';

// Parallel sessions see each other: two real shell sessions (real tmux on this test's socket, real git)
// editing one spec node are flagged on both, by the CLI, the API and the dashboard in a real Chromium.

let dir: string;
let home: string;
let s: ServeProcess;
let browser: Browser;
let page: Page;
let seen: { dialogs: string[]; errors: string[] };

const env = () => ({ env: { TRELLIS_HOME: home } });
const cli = (...args: string[]) => ok(dir, args, env());

beforeAll(async () => {
  dir = tempRepo();
  home = tempDir();
  mkdirSync(join(dir, 'specs/shop'), { recursive: true });
  writeFileSync(join(dir, 'specs/shop/cart.md'), '---\nscenarios:\n  - { id: cart/more, run: "grep -qx More. specs/shop/cart.md" }\n---\n# Cart\n\nThe cart adds.\n');
  writeFileSync(join(dir, 'specs/shop/pay.md'), '# Pay\n\nIt pays.\n');
  writeFileSync(join(dir, 'trellis.json'), '{}\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'spec');
  s = await startServe(packageCopy(), dir, { ...testEnv(dir), TRELLIS_HOME: home });
  ({ browser, page, seen } = await desktopPage());
});

afterAll(async () => {
  await browser?.close();
  await s?.stop('SIGKILL');
  killTmux(home);
  cleanupRepos();
});

/** Types a command into the session's shell and waits for the commit it makes on the session's branch. */
async function commitIn(id: string, command: string, subject: string): Promise<void> {
  await cli('session', 'prompt', id, '--body', command);
  await waitFor(`the session to commit '${subject}'`, () => git(dir, 'log', '-1', '--format=%s', `trellis/${id}`).trim() === subject);
}

describe('two live sessions editing one node', () => {
  it('the second spawn onto the node warns and is not refused; both are flagged with which session and which paths, in the CLI, the API and on both pages, the list and the board', async () => {
    const a = (await cli('session', 'spawn', 'reword the cart', '--harness', 'shell', '--node', 'shop/cart')).trim();
    await commitIn(a, 'echo "More." >> specs/shop/cart.md && echo x > shared.txt && git add -A && git commit -qm cart-a', 'cart-a');

    const spawned = await trellis(dir, ['session', 'spawn', 'tighten the cart', '--harness', 'shell', '--node', 'shop/cart'], env());
    expect(spawned.code).toBe(0);
    const b = spawned.stdout.trim();
    expect(spawned.stderr).toContain(`trellis: warning: session ${a} is already changing node shop/cart (specs/shop/cart.md)`);
    // A node nobody changes: no warning.
    const quiet = await trellis(dir, ['session', 'spawn', 'pay', '--harness', 'shell', '--node', 'shop/pay'], env());
    expect(quiet.stderr).toBe('');

    // Not yet: b has changed nothing.
    const before = JSON.parse(await cli('session', 'ls', '--json'));
    expect(before.find((x: { id: string }) => x.id === a).overlaps).toEqual([]);

    // An uncommitted but staged edit counts as a change.
    await cli('session', 'prompt', b, '--body', 'echo "Less." >> specs/shop/cart.md && echo y > shared.txt && git add -A');
    // Until both files are written: a listing between b's two writes would see specs/shop/cart.md alone.
    // Polled over the serve's HTTP (GET /api/sessions/:id computes the overlaps as `session ls` does): no CLI
    // process per look; the CLI's own listing is read once, below, and must say the same.
    await waitFor('b’s edit to be seen', async () => JSON.stringify(((await (await fetch(new URL(`/api/sessions/${a}`, s.url))).json()) as { overlaps: unknown }).overlaps).includes('shared.txt'));
    const list = JSON.parse(await cli('session', 'ls', '--json'));
    const of = (id: string) => list.find((x: { id: string }) => x.id === id).overlaps;
    expect(of(a)).toEqual([{ session: b, nodes: ['shop/cart'], paths: ['shared.txt', 'specs/shop/cart.md'] }]);
    expect(of(b)).toEqual([{ session: a, nodes: ['shop/cart'], paths: ['shared.txt', 'specs/shop/cart.md'] }]);
    expect(await cli('session', 'ls')).toContain(`overlaps ${b} on node shop/cart, shared.txt, specs/shop/cart.md`);
    await expect.poll(async () => (await (await fetch(new URL(`/api/sessions/${a}`, s.url))).json()).overlaps, { timeout: 10_000 }).toEqual(of(a));

    // Both pages say so, with the other session and the paths; so do the list and the board.
    for (const [me, other] of [
      [a, b],
      [b, a],
    ] as const) {
      // A fresh load each time: after a hash-only goto the previous session's box would still be there.
      await page.goto('about:blank');
      await page.goto(new URL(`#/sessions/${me}`, s.url).href);
      const box = page.getByTestId('overlaps');
      await expect.poll(() => box.textContent({ timeout: 1_000 }).catch(() => ''), { timeout: 15_000 }).toContain(other);
      const text = await box.textContent();
      expect(text).toContain(other);
      expect(text).toContain('specs/shop/cart.md');
      expect(text).toContain('shared.txt');
    }
    await page.goto(new URL('#/sessions', s.url).href);
    await expect.poll(async () => page.locator(`[data-session="${a}"] [data-testid="overlap"]`).textContent(), { timeout: 10_000 }).toContain(b);
    await expect.poll(async () => page.locator(`[data-session="${b}"] [data-testid="overlap"]`).textContent()).toContain(a);
    await page.goto(new URL('#/', s.url).href);
    await expect.poll(async () => page.getByTestId('edited-in-shop/cart').textContent({ timeout: 10_000 }).catch(() => ''), { timeout: 10_000 }).toContain('edited in 2 worktrees');
    expect(await page.getByTestId('edited-in-shop/pay').count()).toBe(0);

    // The session page runs its checks and shows the verdict against trunk (which fails the scenario).
    await cli('eval', 'run', 'cart/more');
    await page.goto(new URL(`#/sessions/${a}`, s.url).href);
    await page.getByRole('button', { name: 'Run checks' }).click();
    await expect.poll(async () => page.getByRole('status').filter({ hasText: 'Checks run' }).textContent({ timeout: 1_000 }).catch(() => ''), { timeout: 20_000 }).toContain('the details are in the review bundle below.');
    // A check run loads the review bundle by itself: the verdict and the gate's line are the bundle's to say.
    await expect.poll(async () => page.locator('[data-check="cart/more"] [data-verdict]').textContent({ timeout: 1_000 }).catch(() => ''), { timeout: 10_000 }).toBe('fixed');
    expect(await page.getByTestId('checks-line').getAttribute('title')).toBe('checks: ready to merge (1 fixed)');

    // A spawn from the page onto the node being changed is made, and its page says what it overlaps.
    await page.goto(new URL('#/sessions', s.url).href);
    // The running sessions come first; the form is a button away.
    await page.getByRole('button', { name: 'Spawn a session' }).click();
    await page.getByLabel('Harness').selectOption('shell');
    await page.getByLabel('Task').fill('a third hand on the cart');
    await page.getByLabel('Nodes (space separated)').fill('shop/cart');
    await page.getByRole('button', { name: 'Spawn' }).click();
    await expect.poll(() => page.url()).toMatch(/#\/sessions\/[^/]+$/);
    const warned = await page.getByTestId('spawn-warnings').textContent({ timeout: 10_000 });
    expect(warned).toContain(`session ${a} is already changing node shop/cart`);
    expect(warned).toContain(`session ${b} is already changing node shop/cart`);
    expect(seen.errors).toEqual([]);

    // Closing one ends the flag on the other.
    await cli('session', 'close', b);
    expect(JSON.parse(await cli('session', 'ls', '--json')).find((x: { id: string }) => x.id === a).overlaps).toEqual([]);
  });
});

describe('OverlapIndex: one session’s update recomputes its pairs only', () => {
  it('set, replace and remove a session; pairs follow, in both directions', () => {
    const ix = new OverlapIndex();
    ix.set({ session: 's1', paths: ['a.txt', 'specs/n.md'], nodes: ['n'] });
    ix.set({ session: 's2', paths: ['b.txt'], nodes: [] });
    expect(ix.overlapsOf('s1')).toEqual([]);
    ix.set({ session: 's2', paths: ['b.txt', 'specs/n.md'], nodes: ['n'] });
    expect(ix.overlapsOf('s1')).toEqual([{ session: 's2', nodes: ['n'], paths: ['specs/n.md'] }]);
    expect(ix.overlapsOf('s2')).toEqual([{ session: 's1', nodes: ['n'], paths: ['specs/n.md'] }]);
    expect(ix.changing('n').map((c) => c.session)).toEqual(['s1', 's2']);
    // Replacing s1's changes drops its old entries.
    ix.set({ session: 's1', paths: ['b.txt'], nodes: [] });
    expect(ix.overlapsOf('s2')).toEqual([{ session: 's1', nodes: [], paths: ['b.txt'] }]);
    ix.remove('s1');
    expect(ix.overlapsOf('s2')).toEqual([]);
    expect(ix.changing('n').map((c) => c.session)).toEqual(['s2']);
  });
});
