import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { desktopPage, screenshot, VIEWPORTS, scrollTo } from './helpers/browser.js';
import { cleanupRepos, git, ok, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { packageCopy, startServe, type ServeProcess } from './helpers/serve.js';
import { killTmux } from './helpers/sessions.js';

/*
 * The session page tells the truth about the gate (issue 29), in a real Chromium against a real
 * `trellis serve` with a real shell session: the review bundle, its line and its checks table refresh on
 * a check run, a commit in the worktree and a trunk move, and never disagree; the page offers only
 * actions that can succeed; a shell session's merge is commands to copy; quarantine asks first.
 */

let dir: string;
let s: ServeProcess;
let browser: Browser;
let page: Page;
let seen: { dialogs: string[]; errors: string[] };

const cli = (...args: string[]) => ok(dir, args);
/** Session `id` as the serve shows it (GET /api/sessions/:id: the same showSession as `trellis session show
 * --json`): no CLI process where the CLI is not what the test looks at. */
const shownOver = async (id: string) => (await (await fetch(new URL(`/api/sessions/${encodeURIComponent(id)}`, s.url))).json()) as { state: string; worktree: string };
const row = (scenario: string) => page.locator(`[data-check="${scenario}"]`);
const verdict = (scenario: string) => row(scenario).locator('[data-verdict]').textContent({ timeout: 2_000 }).catch(() => null);
const bundleHead = () => page.getByTestId('checks').getAttribute('data-head', { timeout: 2_000 }).catch(() => null);
/** The x of each column of the checks table, in the header and in every row: equal down a column, and from one bundle to the next. */
const columnXs = () =>
  page.locator('.checks-table').evaluate((t) =>
    Array.from((t as HTMLTableElement).rows)
      .filter((r) => r.cells.length === 4)
      .map((r) => Array.from(r.cells, (c) => Math.round(c.getBoundingClientRect().x))),
  );
/** Elements of the review bundle whose text is cut (a chip clipped mid-word), named by their text. */
const clipped = () =>
  page.locator('.review').evaluate((r) => Array.from(r.querySelectorAll<HTMLElement>('.chip, td, th, summary')).filter((e) => e.scrollWidth > e.clientWidth + 1).map((e) => e.textContent));
let verdictX: number[] = [];

beforeAll(async () => {
  dir = tempRepo();
  mkdirSync(join(dir, 'specs/shop'), { recursive: true });
  writeFileSync(join(dir, 'specs/shop/cart.md'), '---\nscenarios:\n  - { id: cart/total, run: "grep -q total=42 cart.txt" }\n---\n# Cart\n');
  writeFileSync(join(dir, 'cart.txt'), 'total=42\n');
  // A Trellis project (else serve shows the demo); the queue never holds a session back on a loaded machine.
  writeFileSync(join(dir, 'trellis.json'), '{}\n');
  writeFileSync(join(dir, 'trellis.local.json'), JSON.stringify({ sessions: { minFreeMb: 0, max: 8 } }));
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'cart');
  s = await startServe(packageCopy(), dir, { ...testEnv(dir), TRELLIS_DRAIN_MS: '300' });
  ({ browser, page, seen } = await desktopPage());
});

afterAll(async () => {
  await browser?.close();
  await s?.stop('SIGKILL');
  killTmux(testEnv(dir).TRELLIS_HOME!);
  cleanupRepos();
});

describe('the session page and the gate', () => {
  it('the bundle follows every check run, worktree commit and trunk move; only actions that can succeed are offered', async () => {
    await cli('eval', 'run', '--by', 'ci');
    const id = (await cli('session', 'spawn', 'tidy the cart', '--harness', 'shell', '--node', 'shop/cart')).trim();
    const worktree = (await shownOver(id)).worktree;
    const commit = (file: string, text: string, subject: string) => {
      writeFileSync(join(worktree, file), text);
      git(worktree, 'commit', '-qam', subject);
      return git(worktree, 'rev-parse', 'HEAD').trim();
    };
    await page.goto(new URL(`#/sessions/${id}`, s.url).href);
    await page.getByTestId('link-state').filter({ hasText: 'live' }).waitFor({ timeout: 10_000 });

    // Running: no Merge button, and the page says why in words.
    await page.getByRole('button', { name: 'Run checks' }).waitFor();
    expect(await page.getByRole('button', { name: 'Merge', exact: true }).count()).toBe(0);
    expect(await page.getByTestId('not-offered').textContent()).toContain('Merge is offered once the session is up for review; it is running now.');

    // A break, committed in the worktree; Run checks: the bundle loads at that head, regressed, blocked.
    const broken = commit('cart.txt', 'total=41\n', 'break the total');
    await page.getByRole('button', { name: 'Run checks' }).click();
    await expect.poll(() => page.getByTestId('lifecycle-note').textContent(), { timeout: 20_000 }).toContain(`Checks run on the branch's latest commit (${broken.slice(0, 10)})`);
    await expect.poll(() => verdict('cart/total'), { timeout: 15_000 }).toBe('regressed');
    expect(await bundleHead()).toBe(broken);
    expect(await page.getByTestId('checks-line').textContent()).toContain('Not ready to merge: cart/total blocks it');
    expect(await row('cart/total').locator('.block-reason').textContent()).toBe(`regressed: passes on trunk, fail at ${broken.slice(0, 12)}`);

    // A commit in the worktree: the bundle moves to the new head by itself (not measured there yet).
    const fixed = commit('cart.txt', 'total=42\n', 'restore the total');
    await expect.poll(() => bundleHead(), { timeout: 15_000 }).toBe(fixed);
    await expect.poll(() => verdict('cart/total')).toBe('unmeasured');
    expect(await row('cart/total').locator('.block-reason').textContent()).toBe(`not measured at ${fixed.slice(0, 12)}`);

    // A check run from the CLI: the bundle says ready, line and table together.
    expect((await trellis(dir, ['session', 'check', id])).code).toBe(0);
    await expect.poll(() => verdict('cart/total'), { timeout: 15_000 }).toBe('pass');
    expect(await page.getByTestId('checks-line').textContent()).toBe('Ready to merge: 1 pass.');
    expect(await page.getByTestId('checks-line').getAttribute('title')).toBe('checks: ready to merge (1 pass)');

    // Trunk moves: its reading is no longer at its tip, so the bundle stops saying ready.
    writeFileSync(join(dir, 'README.md'), 'moved\n');
    git(dir, 'add', 'README.md');
    git(dir, 'commit', '-qm', 'trunk moves');
    const tip = git(dir, 'rev-parse', 'HEAD').trim();
    await expect.poll(() => verdict('cart/total'), { timeout: 15_000 }).toBe('unmeasured');
    expect(await row('cart/total').getByTestId('stale-baseline').textContent()).toContain(`not measured at the tip ${tip.slice(0, 10)} (latest: pass at`);
    expect(await row('cart/total').locator('.block-reason').textContent()).toMatch(new RegExp(`^trunk not measured at its tip ${tip.slice(0, 12)} \\(its latest reading is at [0-9a-f]{12}\\)$`));
    expect(await page.getByTestId('checks-line').textContent()).toContain('Not ready to merge: cart/total blocks it');

    // Up for review: a shell session's merge is commands to copy (no Merge button), the CLI's own text:
    // the main checkout by its absolute path, no editor opened (issue 44).
    // While the checks block it, the one next step is to run them again (the commands wait for ready).
    await page.getByRole('button', { name: 'Request review' }).click();
    await expect.poll(() => page.getByTestId('decision').getByTestId('session-state').textContent(), { timeout: 15_000 }).toMatch(/^review/);
    expect(await page.getByTestId('next-action').textContent()).toBe('Run checks');
    expect(await page.getByTestId('merge-by-hand').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Merge', exact: true }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Request review' }).count()).toBe(0);
    await page.getByRole('button', { name: 'Run checks' }).click();
    await expect.poll(() => verdict('cart/total'), { timeout: 20_000 }).toBe('pass');
    await page.getByTestId('merge-by-hand').waitFor({ timeout: 15_000 });
    const commands = await page.getByTestId('merge-commands').textContent();
    expect(commands).toBe(`git -C ${dir} switch main\ngit -C ${dir} merge --no-ff --no-edit trellis/${id}`);
    // Laid out for reading (issue 34): as wide as the page's main column, the checks before everything else,
    // nothing clipped; at the phone's width too.
    for (const size of [VIEWPORTS.desktop, VIEWPORTS.phone]) {
      await page.setViewportSize(size);
      const [review, main] = await Promise.all([page.locator('.review').boundingBox(), page.locator('.session-page').boundingBox()]);
      expect(Math.round(review!.width)).toBe(Math.round(main!.width));
      expect(await page.locator('.review').evaluate((r) => r.querySelector('[data-testid="checks"]')!.compareDocumentPosition(r.querySelector('[data-testid="preflight"]')!) & Node.DOCUMENT_POSITION_FOLLOWING)).toBeTruthy();
      expect(await clipped()).toEqual([]);
      await scrollTo(page.getByTestId('merge-by-hand'));
      await screenshot(page, 'session-merge-by-hand');
      await scrollTo(page.locator('.review'));
      await screenshot(page, 'session-gate');
    }
    await page.setViewportSize(VIEWPORTS.desktop);
    verdictX = (await columnXs())[0]!;
    // No zero badge: this project has no open issue, so the Issues tab shows no count.
    expect(await page.locator('nav[aria-label="Views"] .count').allTextContents()).not.toContain('0');
    // The inbox's mark takes the colour of the session's state chip, for every state: a stopped session
    // (review, interrupted) is never the running green. Measured on marks and chips made in this page.
    const states = ['starting', 'running', 'awaiting', 'review', 'merging', 'interrupted', 'quarantined', 'failed', 'closed'];
    const colours = await page.evaluate((states) => {
      const box = document.createElement('div');
      document.querySelector('main')!.append(box);
      const out = states.map((st) => {
        const mark = box.appendChild(document.createElement('span'));
        mark.className = `wait-mark state-${st}`;
        const chip = box.appendChild(document.createElement('span'));
        chip.className = `chip state state-${st}`;
        return [st, getComputedStyle(mark).borderTopColor, getComputedStyle(chip).color];
      });
      box.remove();
      return out;
    }, states);
    for (const [st, mark, chip] of colours) expect(`${st}: ${mark}`).toBe(`${st}: ${chip}`);

    // Quarantine asks, like close; once quarantined nothing that would be refused is offered.
    await page.getByRole('button', { name: 'Quarantine', exact: true }).click();
    const confirm = page.getByRole('group', { name: 'Confirm: Quarantine' });
    expect(await confirm.textContent()).toContain(`Quarantine session ${id}? Its agent is stopped`);
    expect((await shownOver(id)).state).toBe('review');
    await page.getByRole('button', { name: 'Yes, quarantine' }).click();
    await expect.poll(() => page.getByTestId('session-state').first().textContent(), { timeout: 15_000 }).toMatch(/^quarantined/);
    // Without a reason given: "quarantined · manual · by user", never "by user by user".
    expect(await page.getByTestId('session-state').first().textContent()).toBe('quarantinedmanualby user');
    await page.getByTestId('no-prompt').waitFor();
    for (const name of ['Interrupt', 'Request review', 'Merge', 'Quarantine', 'Send prompt']) expect(await page.getByRole('button', { name, exact: true }).count()).toBe(0);
    for (const name of ['Resume', 'Close', 'Run checks']) expect(await page.getByRole('button', { name, exact: true }).count()).toBe(1);
    expect(seen.errors).toEqual([]);
  });

  it('the scoreboard marks a reading older than its scope’s tip as stale, with its commit; a closed session folds into one group', async () => {
    const listed = JSON.parse(await cli('session', 'ls', '--all', '--json'));
    const id = (Array.isArray(listed) ? listed : listed.sessions)[0].id as string;
    await cli('session', 'close', id);
    const measured = git(dir, 'rev-parse', 'HEAD').trim();
    writeFileSync(join(dir, 'README.md'), 'moved again\n');
    git(dir, 'commit', '-qam', 'trunk moves again');
    await page.goto(new URL('#/eval', s.url).href);
    const trunk = page.locator('[data-scenario="cart/total"] td[data-scope="trunk"]');
    const tip = git(dir, 'rev-parse', 'HEAD').trim();
    await expect.poll(() => trunk.getByTestId('stale').textContent({ timeout: 2_000 }).catch(() => null), { timeout: 15_000 }).toBe(
      `Predates trunk's tip ${tip.slice(0, 8)}: measured at ${measured.slice(0, 8)}, before trunk moved (a merge or a commit). Run it again to measure the tip.`,
    );
    expect(await trunk.getByTestId('outcome').getAttribute('class')).toContain('predates');
    // Columns: trunk, and the closed session folded into one group until asked for.
    expect(await page.locator('table.scoreboard thead th').allTextContents()).toEqual(['Scenario', 'trunk', 'Show 1 closed session']);
    expect(await page.locator('[data-scenario="cart/total"] td').last().textContent()).toBe('1 closed session: latest pass');
    await page.getByRole('button', { name: 'Show 1 closed session' }).click();
    await page.locator(`[data-scenario="cart/total"] td[data-scope="${id}"]`).waitFor();
    expect(await page.getByRole('button', { name: 'Fold 1 closed session' }).getAttribute('aria-expanded')).toBe('true');
    for (const size of [VIEWPORTS.desktop, VIEWPORTS.phone]) {
      await page.setViewportSize(size);
      await screenshot(page, 'eval-stale');
    }
    await page.setViewportSize(VIEWPORTS.desktop);
  });

  it('a branch that rewrote its check shows both definitions and both results; a person accepts the new one from the page', async () => {
    const id = (await cli('session', 'spawn', 'simplify the cart check', '--harness', 'shell', '--node', 'shop/cart')).trim();
    const worktree = (await shownOver(id)).worktree;
    writeFileSync(join(worktree, 'specs/shop/cart.md'), '---\nscenarios:\n  - { id: cart/total, run: "true" }\n---\n# Cart\n');
    writeFileSync(join(worktree, 'cart.txt'), 'total=0\n');
    // A long file beside the short ones: its diff is folded, theirs open.
    writeFileSync(join(worktree, 'prices.csv'), Array.from({ length: 90 }, (_, i) => `item-${i},${i}.00`).join('\n') + '\n');
    git(worktree, 'add', 'prices.csv');
    git(worktree, 'commit', '-qam', 'rewrite the check');
    await page.goto(new URL(`#/sessions/${id}`, s.url).href);
    await page.getByRole('button', { name: 'Run checks' }).click();
    await expect.poll(() => verdict('cart/total'), { timeout: 20_000 }).toBe('changed');
    // The scenario columns sit where they sat in the other session's bundle, though this row is taller.
    const xs = await columnXs();
    for (const r of xs) expect(r).toEqual(verdictX);
    expect(await clipped()).toEqual([]);
    const folds = await page.locator('.review details.file-diff').evaluateAll((ds) => ds.map((d) => [d.getAttribute('data-file'), (d as HTMLDetailsElement).open]));
    expect(folds).toEqual([
      ['cart.txt', true],
      ['prices.csv', false],
      ['specs/shop/cart.md', true],
    ]);
    expect(await page.locator('details[data-file="prices.csv"] summary').textContent()).toMatch(/^added prices\.csv \+90 −0 · 9\d lines, folded \(more than 60\)$/);
    const both = row('cart/total').getByTestId('changed-definition');
    expect(await both.textContent()).toBe("Fixed at dispatchgrep -q total=42 cart.txt → failThe branch'strue → pass");
    expect(await page.getByTestId('checks-line').textContent()).toContain('Run the checks again, accept a changed definition, or a person merges anyway with a reason.');
    await scrollTo(page.locator('.accept-changed'));
    await screenshot(page, 'session-changed-check');
    await page.getByLabel("Accept the branch's definition of cart/total, because").fill('the total is not checked any more');
    await page.getByRole('button', { name: 'Accept the new definition' }).click();
    await expect.poll(() => page.getByTestId('acceptance').textContent({ timeout: 2_000 }).catch(() => null), { timeout: 15_000 }).toBe(
      'New definition of cart/total accepted by human: the total is not checked any more',
    );
    await expect.poll(() => verdict('cart/total')).toBe('pass');
    expect(git(dir, 'log', '-1', '--format=%an|%s', `refs/trellis/sessions/${id}`).trim()).toBe('human|changed check accepted by human for cart/total (run: true): the total is not checked any more');
    for (const size of [VIEWPORTS.desktop, VIEWPORTS.phone]) {
      await page.setViewportSize(size);
      // Both definitions read across the bundle's width, never squeezed into a column a letter wide.
      const widths = await page.locator('.changed-definition dd').evaluateAll((dds) => dds.map((d) => d.getBoundingClientRect().width));
      expect(Math.min(...widths)).toBeGreaterThan(150);
      expect(await clipped()).toEqual([]);
      await scrollTo(page.locator('.review'));
      await screenshot(page, 'session-review-files');
    }
    await page.setViewportSize(VIEWPORTS.desktop);
  });
});
