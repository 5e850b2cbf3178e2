import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ACTIONS } from '../src/cli/main.js';
import { ISSUE_ACTIONS } from '../src/cli/issue-commands.js';
import { SESSION_ACTIONS } from '../src/cli/session-commands.js';
import { EVAL_ACTIONS } from '../src/cli/eval-commands.js';
import { screenshot, desktopPage } from './helpers/browser.js';
import { cleanupRepos, git, ok, ROOT, tempDir, testEnv, trellis } from './helpers/repo.js';
import { startServe, type ServeProcess } from './helpers/serve.js';
import { demoRepo } from './helpers/server.js';
import { killTmux } from './helpers/sessions.js';

/**
 * Edit and reopen (from the page and the CLI, every version kept in git), the keyboard (the command
 * palette reaching a session, j/k, ?), and the CLI's help naming its actions.
 */

let dir: string;
let home: string;
let s: ServeProcess;
let browser: Browser;
let page: Page;
let seen: { dialogs: string[]; errors: string[] };

const cli = (...args: string[]) => ok(dir, args, { env: { TRELLIS_HOME: home } });
const open = async (hash: string) => {
  await page.goto(new URL(hash, s.url).href);
  await page.getByTestId('link-state').filter({ hasText: 'live' }).waitFor({ timeout: 10_000 });
};
const versions = (id: string) => git(dir, 'log', '--format=%s', `refs/trellis/issues/${id}`).trim().split('\n');

beforeAll(async () => {
  dir = await demoRepo();
  home = tempDir();
  s = await startServe(ROOT, dir, { ...testEnv(dir), TRELLIS_HOME: home });
  ({ browser, page, seen } = await desktopPage());
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await s?.stop('SIGKILL');
  killTmux(home);
  cleanupRepos();
});

describe('edit and reopen', () => {
  it('from the page: the concern and body change, the thread says "edited", git log keeps every version; a landed thread reopens', async () => {
    const id = (await cli('issue', 'open', 'Tea is too hot', '--body', 'Served at 95 °C.', '--by', 'ann')).trim();
    await open(`#/issues/${id}`);
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Concern').fill('Tea is served too hot');
    await page.getByLabel('Body (Markdown)').fill('Served at 95 °C; it should be 80 °C.');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('Tea is served too hot');
    expect(await page.getByTestId('issue-body').textContent()).toContain('80 °C');
    // A page write carries the person's name: git's user.name of the project (the CLI's rule), never "human".
    expect(await page.getByTestId('edited').textContent()).toMatch(/edited by human/);
    // The CLI reads the new text; the ref's history keeps the old one.
    const shown = JSON.parse(await cli('issue', 'show', id, '--json'));
    expect([shown.concern, shown.body]).toEqual(['Tea is served too hot', 'Served at 95 °C; it should be 80 °C.']);
    expect(JSON.parse(await cli('issue', 'timeline', id, '--json')).events.at(-1)).toMatchObject({ type: 'edited', by: 'human' });
    expect(await cli('issue', 'show', id)).toMatch(/edited by human/);
    expect(versions(id)).toEqual(['edit: concern "Tea is served too hot" and body', 'open: Tea is too hot']);

    await cli('issue', 'close', id, '--by', 'ann');
    // Closed, in words (the API and the CLI keep the value `landed`).
    await expect.poll(() => page.locator('.page-head .chip.status').first().textContent(), { timeout: 15_000 }).toBe('closed');
    expect(await page.locator('.page-head .chip.status').first().getAttribute('data-status')).toBe('landed');
    await page.getByRole('button', { name: 'Reopen' }).click();
    await expect.poll(() => page.locator('.page-head .chip.status').first().textContent()).toBe('open');
    expect(JSON.parse(await cli('issue', 'show', id, '--json')).status).toBe('open');
    expect(versions(id)[0]).toBe('reopen: open');
    // The timeline: who opened, edited, closed and reopened it, each with its time, as the forges show it.
    await expect.poll(() => page.locator('[data-event]').count()).toBe(4);
    const said = (await page.locator('[data-event]').allTextContents()).map((t) => t.replace(/\s+(just now|\d+ min ago)$/, ''));
    expect(said).toEqual(['ann opened this issue', 'human edited the concern or text', 'ann closed this issue', 'human reopened this issue']);
    expect(await page.locator('[data-event] time').count()).toBe(4);
    await screenshot(page, 'thread-edited');
  });

  it('from the CLI: edit names what changed, reopen brings a landed thread back; refusals are clear', async () => {
    const id = (await cli('issue', 'open', 'Scones run out', '--by', 'bob')).trim();
    expect(await cli('issue', 'edit', id, '--body', 'By 10 am.', '--by', 'bob')).toBe(`edited ${id}\n`);
    expect(await cli('issue', 'edit', id, '--body', 'By 10 am.', '--by', 'bob')).toBe(`${id} already reads so\n`);
    expect(await cli('issue', 'reopen', id, '--by', 'bob')).toBe(`${id} was already open\n`);
    await cli('issue', 'close', id, '--by', 'bob');
    expect(await cli('issue', 'reopen', id, '--by', 'bob')).toBe(`${id} open\n`);
    expect(versions(id)).toEqual(['reopen: open', 'close: landed', 'edit: body', 'open: Scones run out']);
    const bare = await trellis(dir, ['issue', 'edit', id], { env: { TRELLIS_HOME: home } });
    expect([bare.code, bare.stderr]).toEqual([2, expect.stringContaining('an edit needs --concern <text> or --body <text>')]);
    // The same verbs over HTTP.
    const res = await fetch(new URL(`/api/issues/${id}/edit`, s.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ concern: '  ' }) });
    expect([res.status, (await res.json()).error.code]).toEqual([400, 'INVALID_INPUT']);
  });
});

describe('the keyboard', () => {
  it('Ctrl-K reaches a session by typing part of its title; Enter opens its page', async () => {
    const id = (await cli('session', 'spawn', 'Polish the copper kettles', '--harness', 'shell')).trim();
    await open('#/board');
    await page.keyboard.press('Control+k');
    const input = page.getByRole('combobox');
    await input.waitFor();
    await input.fill('copper kett');
    await expect.poll(() => page.getByTestId('palette-list').locator('li').first().textContent()).toContain('Polish the copper kettles');
    await screenshot(page, 'palette');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.url()).toContain(`#/sessions/${id}`);
    await page.getByTestId('session-state').first().waitFor();
    await cli('session', 'close', id);
  });

  it('j and k move through a list, ? shows the shortcuts, Escape closes them', async () => {
    await open('#/issues');
    await page.locator('.issue-list li').nth(2).waitFor();
    await page.locator('main h1').click();
    await page.keyboard.press('j');
    await page.keyboard.press('j');
    const second = await page.locator('main [data-nav]').nth(1).textContent();
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(second);
    await page.keyboard.press('k');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(await page.locator('main [data-nav]').first().textContent());
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    // Escape closes them wherever the focus is: a quick Escape lands before the dialog has taken it.
    await page.keyboard.press('?');
    await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor();
    await page.evaluate(() => document.querySelector<HTMLElement>('main [data-nav]')!.focus());
    await page.keyboard.press('Escape');
    await expect.poll(() => page.getByRole('dialog').count()).toBe(0);
    expect(seen.errors).toEqual([]);
  });
});

describe('the CLI’s help', () => {
  it('issue --help and session --help list their actions, exactly the ones each takes', async () => {
    for (const [command, actions] of [
      ['issue', ISSUE_ACTIONS],
      ['session', SESSION_ACTIONS],
      ['eval', EVAL_ACTIONS],
    ] as const) {
      expect(ACTIONS[command]!.map(([a]) => a.split(' ')[0])).toEqual(Object.keys(actions));
      const help = await ok(ROOT, [command, '--help']);
      for (const name of Object.keys(actions)) expect(help).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
    }
  });

  it('an empty session ls says so, issue open --node refuses a node the tree lacks with the nearest names, issue reply without a body names --body', async () => {
    const empty = await trellis(dir, ['session', 'ls'], { env: { TRELLIS_HOME: tempDir() } });
    expect([empty.code, empty.stdout, empty.stderr]).toEqual([0, '', expect.stringContaining('no open sessions')]);
    const before = git(dir, 'for-each-ref', 'refs/trellis/issues');
    const typo = await trellis(dir, ['issue', 'open', 'Typo in a node', '--node', 'checkout/paymnet', '--by', 'ann'], { env: { TRELLIS_HOME: home } });
    expect([typo.code, typo.stdout, typo.stderr]).toEqual([1, '', expect.stringContaining("no spec node 'checkout/paymnet' in specs/; did you mean 'checkout/payment'?")]);
    const none = await trellis(dir, ['issue', 'open', 'Typo in a node', '--node', 'does/not/exist', '--by', 'ann'], { env: { TRELLIS_HOME: home } });
    expect([none.code, none.stderr]).toEqual([1, expect.stringContaining("no spec node 'does/not/exist' in specs/ ('trellis board' lists the nodes")]);
    // Refused before anything is written.
    expect(git(dir, 'for-each-ref', 'refs/trellis/issues')).toBe(before);
    const known = await trellis(dir, ['issue', 'open', 'A real node', '--node', 'checkout/payment', '--by', 'ann'], { env: { TRELLIS_HOME: home } });
    expect([known.code, known.stderr]).toEqual([0, '']);
    const bare = await trellis(dir, ['issue', 'reply', known.stdout.trim()], { env: { TRELLIS_HOME: home } });
    expect([bare.code, bare.stderr]).toEqual([2, expect.stringContaining('a reply needs a body: --body "<text>", or --body - to read it from standard input')]);
  });
});
