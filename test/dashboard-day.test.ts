import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeByHand } from '../src/projections/merge-by-hand.js';
import { launchChromium, VIEWPORTS, watchPage } from './helpers/browser.js';
import { cleanupRepos, git, ok, ROOT, tempDir, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { packageCopy, startServe, type ServeProcess } from './helpers/serve.js';
import { killTmux, waitFor } from './helpers/sessions.js';

/*
 * "A day with Trellis" (issue 44), walked in a real Chromium against a real `trellis serve` of a fresh
 * project, with two `shell` sessions typed into through their panes: the overlap warned; the first merged
 * by running the page's own copied commands exactly as copied, in a shell whose EDITOR and GIT_EDITOR fail
 * if run (no editor may open); trunk brought into the second after the conflict (resolved in its pane,
 * committed, checks run again), its review and merge; both issues closed from the page. The session page
 * is screenshot at 1280×800 and 390×844 with its decision strip (verdict and next action) asserted to lie
 * in the first viewport.
 */

const SHOTS = join(ROOT, 'test-results', 'dashboard-day');

let dir: string;
let home: string;
let s: ServeProcess;
let browser: Browser;
let page: Page;
let seen: ReturnType<typeof watchPage>;
/** The program EDITOR and GIT_EDITOR name: it records that it ran, and fails. */
let editor: string;
let editorRan: string;

beforeAll(async () => {
  dir = tempRepo();
  home = testEnv(dir).TRELLIS_HOME!;
  mkdirSync(join(dir, 'specs'), { recursive: true });
  writeFileSync(join(dir, 'specs/import.md'), '---\nscenarios:\n  - { id: import/doc, run: "grep -q Import specs/import.md" }\n---\n# Import\n\nIt imports.\n');
  // The code both sessions change (the scenario's definition, in the node's spec, stays as dispatched).
  mkdirSync(join(dir, 'src'));
  writeFileSync(join(dir, 'src/formats.txt'), 'Formats:\n');
  writeFileSync(join(dir, 'trellis.json'), '{}\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'spec');
  const tools = tempDir();
  editorRan = join(tools, 'editor-ran');
  editor = join(tools, 'no-editor');
  writeFileSync(editor, `#!/bin/sh\necho "$@" >> '${editorRan}'\nexit 1\n`);
  chmodSync(editor, 0o755);
  // No agent installed (the shell is the default) and no editor that works, in the serve and its panes.
  const PATH = (process.env.PATH ?? '').split(delimiter).filter((d) => !d.includes('node_modules')).join(delimiter);
  s = await startServe(packageCopy(), dir, { ...testEnv(dir), PATH, EDITOR: editor, GIT_EDITOR: editor, VISUAL: editor, TRELLIS_DRAIN_MS: '300' });
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: VIEWPORTS.desktop });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(s.url).origin });
  page = await context.newPage();
  seen = watchPage(page);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await s?.stop('SIGKILL');
  if (home) killTmux(home);
  cleanupRepos();
});

const shot = async (name: string) => {
  mkdirSync(SHOTS, { recursive: true });
  const vp = page.viewportSize()!;
  const path = join(SHOTS, `${name}-${vp.width}x${vp.height}.png`);
  await page.screenshot({ path });
  return path;
};
const strip = () => page.getByTestId('decision');
const next = () => strip().getByTestId('next-action');
const text = (l: ReturnType<Page['locator']>) => l.textContent({ timeout: 1_000 }).catch(() => '');

/** The decision strip, verdict and next action included, lies inside the first viewport of the page. */
async function stripInFirstViewport(): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  const vp = page.viewportSize()!;
  for (const part of [strip(), strip().getByTestId('verdict'), next()]) {
    const box = (await part.boundingBox())!;
    expect({ top: box.y >= 0, bottom: box.y + box.height <= vp.height, left: box.x >= 0, right: box.x + box.width <= vp.width }).toEqual({ top: true, bottom: true, left: true, right: true });
  }
}

/** Types a command into the session's terminal (the page's own) and waits for `done` on its screen. */
async function typeInPane(command: string, done: string): Promise<void> {
  await expect.poll(() => text(page.getByTestId('pane-state')), { timeout: 20_000 }).toBe('live');
  await page.locator('.terminal-frame .xterm').click();
  await page.keyboard.type(`${command} && echo ${done}`);
  await page.keyboard.press('Enter');
  const rows = () => page.locator('.xterm-rows > div').evaluateAll((els) => els.map((e) => (e.textContent ?? '').trim()));
  await expect.poll(async () => (await rows()).includes(done), { timeout: 20_000 }).toBe(true);
}

/** Spawns a shell session from the Sessions page for `issue`; answers its id once its page is open. */
async function spawn(task: string, issue: string): Promise<string> {
  await page.goto(new URL('#/sessions', s.url).href);
  // Running sessions come first; the form is a button away once there are any.
  await page.locator('[data-testid="spawn-open"], form.spawn').first().waitFor({ timeout: 15_000 });
  if (await page.getByTestId('spawn-open').count()) await page.getByTestId('spawn-open').click();
  await page.getByLabel('Task').fill(task);
  await page.getByLabel('Nodes (space separated)').fill('import');
  await page.getByLabel('Issue').fill(issue);
  await page.getByRole('button', { name: 'Spawn', exact: true }).click();
  await expect.poll(() => page.url()).toMatch(/#\/sessions\/[^/?]+$/);
  return decodeURIComponent(/#\/sessions\/([^/?]+)$/.exec(page.url())![1]!);
}

/** Clicks the strip's next action (a button) and checks it is the one named. */
async function clickNext(label: string): Promise<void> {
  await expect.poll(() => text(next().getByRole('button').first()), { timeout: 20_000 }).toBe(label);
  await next().getByRole('button', { name: label, exact: true }).click();
}

/** Copies the page's merge commands with its own button, then runs exactly what was copied, from another folder. */
async function mergeAsThePageSays(branch: string): Promise<string> {
  await expect.poll(() => next().getByTestId('merge-by-hand').count(), { timeout: 20_000 }).toBe(1);
  const shown = (await page.getByTestId('merge-commands').textContent())!;
  // The card's text is the one text the CLI's refusal prints (projections/merge-by-hand.ts), main checkout by its absolute path.
  expect(shown).toBe(mergeByHand(dir, 'main', branch).commands);
  expect(await page.getByTestId('main-checkout').textContent()).toBe(dir);
  await page.getByRole('button', { name: 'Copy the commands' }).click();
  await expect.poll(() => text(page.getByRole('button', { name: 'Copied' })), { timeout: 5_000 }).toBe('Copied');
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  expect(copied).toBe(shown);
  // stdin not a terminal would keep git from opening an editor anyway: the shell runs on a pseudo-terminal
  // (script(1)), as a person's does, so only --no-edit keeps the failing editor from running.
  const elsewhere = tempDir();
  const script = join(elsewhere, 'merge.sh');
  writeFileSync(script, `set -e\n${copied}\n`);
  execFileSync('script', ['-qec', `bash ${script}`, '/dev/null'], { cwd: elsewhere, env: { ...testEnv(dir), EDITOR: editor, GIT_EDITOR: editor, VISUAL: editor }, stdio: 'pipe' });
  expect(existsSync(editorRan)).toBe(false);
  return git(dir, 'rev-parse', 'HEAD').trim();
}

/** Closes the session's issue from the strip (it asks first), and the session after it. */
async function closeIssueThenSession(concern: string): Promise<void> {
  await expect.poll(() => text(next().getByTestId('fixed-issue')), { timeout: 20_000 }).toContain('is still open');
  await next().getByRole('button', { name: 'Close the issue' }).click();
  await page.getByRole('button', { name: 'Yes, close the issue' }).click();
  await expect.poll(() => text(next().getByTestId('fixed-issue')), { timeout: 15_000 }).toBe(`Its issue ${concern} is closed.`);
  await strip().getByRole('button', { name: 'Close', exact: true }).click();
  await page.getByRole('button', { name: 'Yes, close', exact: true }).click();
  await expect.poll(() => text(strip().getByTestId('session-state')), { timeout: 15_000 }).toMatch(/^closed/);
}

describe('a day with Trellis, in the page', () => {
  it('two shell sessions: overlap warned, the first merged by the copied commands, trunk brought into the second, its review and merge, the issues closed', async () => {
    const csv = (await ok(dir, ['issue', 'open', 'Import reads CSV', '--node', 'import'])).trim();
    const json = (await ok(dir, ['issue', 'open', 'Import reads JSON', '--node', 'import'])).trim();

    // Morning: two sessions on the same node, each typed into through its pane.
    const one = await spawn('Import: read CSV', csv);
    await typeInPane(`echo 'CSV' >> src/formats.txt && git commit -qam one-csv`, 'one-ok');
    const two = await spawn('Import: read JSON', json);
    await typeInPane(`echo 'JSON' >> src/formats.txt && git commit -qam two-json`, 'two-ok');
    // Warned on its page: the other live session changes the same file.
    await expect.poll(() => text(page.getByTestId('overlaps')), { timeout: 20_000 }).toContain('src/formats.txt');
    expect(await page.getByTestId('overlaps').textContent()).toContain(one);

    // Sessions: the running ones first, the spawn form a button away.
    await page.goto(new URL('#/sessions', s.url).href);
    await page.locator('.session-list li').first().waitFor();
    expect(await page.getByRole('heading', { name: 'Spawn a session' }).count()).toBe(0);
    expect(await page.getByTestId('spawn-open').textContent()).toBe('Spawn a session');
    expect(await page.locator('.session-list li').evaluateAll((els) => els.map((e) => e.getAttribute('data-session')).sort())).toEqual([one, two].sort());
    // On a phone, both running sessions are in the first viewport.
    await page.setViewportSize(VIEWPORTS.phone);
    const last = (await page.locator('.session-list li').last().boundingBox())!;
    expect(last.y + last.height).toBeLessThanOrEqual(VIEWPORTS.phone.height);
    await shot('sessions');
    await page.setViewportSize(VIEWPORTS.desktop);

    // The first: its checks, its review, then merged by the page's own commands.
    await page.goto(new URL(`#/sessions/${one}`, s.url).href);
    await clickNext('Run checks');
    await expect.poll(() => text(strip().getByTestId('verdict')), { timeout: 30_000 }).toMatch(/^Ready to merge/).catch(async (e) => (console.log(await page.locator('.session-page').textContent()), await shot('checks-fail'), Promise.reject(e)));
    expect(await page.getByTestId('lifecycle-note').textContent()).not.toMatch(/reading\(s\)|at its tip|scope/);
    await clickNext('Request review');
    await expect.poll(() => text(strip().getByTestId('session-state')), { timeout: 15_000 }).toMatch(/^review/);
    expect(await page.locator('.session-page').textContent()).not.toContain('already up for review');
    // The CLI refuses the merge of a shell session with the same commands the page shows.
    const refused = await trellis(dir, ['session', 'merge', one]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`${dir}:\n${mergeByHand(dir, 'main', `trellis/${one}`).commands}\n`);
    const first = await mergeAsThePageSays(`trellis/${one}`);
    // The page sees the merge by itself and offers what is next: close the issue.
    await expect.poll(() => text(strip().getByTestId('verdict')), { timeout: 20_000 }).toBe(`Merged into main at ${first.slice(0, 10)}.`);
    await closeIssueThenSession('Import reads CSV');

    // The second now conflicts with trunk: the page's next action is to bring trunk in, in its terminal.
    await page.goto(new URL(`#/sessions/${two}`, s.url).href);
    await clickNext('Run checks');
    await expect.poll(() => text(next().getByTestId('bring-trunk-in')), { timeout: 30_000 }).toContain('run git merge --no-edit main');
    expect(await strip().getByTestId('verdict').textContent()).toBe('Not ready to merge: it conflicts with main in src/formats.txt (checks: 1 pass).');
    await page.evaluate(() => window.scrollTo(0, 0));
    await shot('conflict');
    await typeInPane(`git merge --no-edit main; printf 'Formats:\\nCSV\\nJSON\\n' > src/formats.txt && git commit -qam 'Bring main in'`, 'resolved-ok');
    await expect.poll(() => next().getByTestId('bring-trunk-in').count(), { timeout: 20_000 }).toBe(0);
    await clickNext('Run checks');
    await expect.poll(() => text(strip().getByTestId('verdict')), { timeout: 30_000 }).toMatch(/^Ready to merge/);
    await clickNext('Request review');
    await expect.poll(() => next().getByTestId('merge-by-hand').count(), { timeout: 20_000 }).toBe(1);

    // The decision above the fold, at both sizes.
    await stripInFirstViewport();
    const shots = [await shot('session-ready')];
    await page.setViewportSize(VIEWPORTS.phone);
    await stripInFirstViewport();
    shots.push(await shot('session-ready'));
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(VIEWPORTS.phone.width);
    await page.setViewportSize(VIEWPORTS.desktop);

    const second = await mergeAsThePageSays(`trellis/${two}`);
    await expect.poll(() => text(strip().getByTestId('verdict')), { timeout: 20_000 }).toBe(`Merged into main at ${second.slice(0, 10)}.`);
    await stripInFirstViewport();
    shots.push(await shot('session-merged'));
    await page.setViewportSize(VIEWPORTS.phone);
    await stripInFirstViewport();
    shots.push(await shot('session-merged'));
    await page.setViewportSize(VIEWPORTS.desktop);
    await closeIssueThenSession('Import reads JSON');
    expect(readFileSync(join(dir, 'src/formats.txt'), 'utf8')).toBe('Formats:\nCSV\nJSON\n');
    for (const id of [csv, json]) expect(JSON.parse(await ok(dir, ['issue', 'show', id, '--json'])).status).toBe('landed');
    expect(existsSync(editorRan)).toBe(false);
    expect(seen.errors).toEqual([]);
    expect(seen.dialogs).toEqual([]);
    console.log(`day screenshots: ${shots.join(' ')}`);
  }, 120_000);
});
