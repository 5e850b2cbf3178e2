import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProject } from '../src/store/trellis-home.js';
import { hashPassword } from '../src/store/host/hub-config.js';
import { screenshot, desktopPage } from './helpers/browser.js';
import { startTestGateway, type TestGateway, catalogProjects } from './helpers/gateway.js';
import { cleanupRepos, tempDir, tempRepo } from './helpers/repo.js';

/**
 * The host home of a hub with a password, in a real Chromium against a real gateway: removing a project
 * from the list (with a confirmation, by keyboard), and `#/login?next=…` for a caller who is logged in.
 */

const PASSWORD = 'correct horse battery staple';

let home: string;
let gw: TestGateway;
let alpha: string;
let beta: string;
let browser: Browser;
let page: Page;
let seen: { dialogs: string[]; errors: string[] };

const at = (path: string) => new URL(path, gw.url).href;
const row = (root: string) => page.getByTestId(`project-${encodeProject(root)}`);
const cataloged = () => (JSON.parse(readFileSync(join(home, 'projects.json'), 'utf8')).projects as { root: string }[]).map((p) => p.root);
const focused = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent ?? '');

beforeAll(async () => {
  home = tempDir();
  alpha = tempRepo();
  beta = tempRepo();
  writeFileSync(join(alpha, 'trellis.json'), '{ "name": "Alpha Co" }\n');
  writeFileSync(join(beta, 'trellis.json'), '{ "name": "Beta Co" }\n');
  writeFileSync(join(home, 'hub.json'), JSON.stringify({ adminPassword: await hashPassword(PASSWORD) }));
  catalogProjects(home, [alpha, beta]);
  gw = await startTestGateway(home);
  ({ browser, page, seen } = await desktopPage());
  await page.goto(gw.url);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await row(alpha).waitFor({ timeout: 10_000 });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  cleanupRepos();
});

describe('removing a project from the host’s list', () => {
  it('is reached by keyboard, asks first (Cancel and Escape keep it), then takes it off the list live; the folder stays', async () => {
    await page.goto(at('/#/projects'));
    await row(beta).waitFor();
    // Tab order: Manage, then Remove.
    await row(alpha).getByRole('link', { name: 'Manage Alpha Co' }).focus();
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('Remove Alpha Co');

    // Asking puts the focus on Cancel; Cancel gives it back to Remove, and nothing is removed.
    await page.keyboard.press('Enter');
    const confirm = page.getByRole('group', { name: 'Confirm: remove Alpha Co' });
    await confirm.waitFor();
    expect(await confirm.textContent()).toContain('Its folder and repository stay as they are');
    expect(await focused()).toBe('Cancel');
    await screenshot(page, 'projects-remove-confirm');
    await page.keyboard.press('Enter');
    await expect.poll(() => confirm.count()).toBe(0);
    expect(await focused()).toBe('Remove Alpha Co');
    // Escape is a Cancel too.
    await page.keyboard.press('Enter');
    await confirm.waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => confirm.count()).toBe(0);
    expect(await focused()).toBe('Remove Alpha Co');
    expect(cataloged()).toEqual([alpha, beta]);

    // Yes: the row leaves the list without a reload; the catalog no longer has it; its folder is untouched.
    await page.evaluate(() => ((window as unknown as { __same: number }).__same = 7));
    await page.keyboard.press('Enter');
    await confirm.waitFor();
    await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('Yes, remove');
    await page.keyboard.press('Enter');
    await expect.poll(() => row(alpha).count(), { timeout: 15_000 }).toBe(0);
    expect(await row(beta).count()).toBe(1);
    expect(cataloged()).toEqual([beta]);
    expect(existsSync(join(alpha, '.git'))).toBe(true);
    expect(readFileSync(join(alpha, 'trellis.json'), 'utf8')).toContain('Alpha Co');
    expect(await page.evaluate(() => (window as unknown as { __same?: number }).__same)).toBe(7);
    expect(seen).toEqual({ dialogs: [], errors: [] });
  });
});

describe('#/login?next=… for a caller who is logged in already', () => {
  it('goes to next when it is a view of this page, replacing the login entry in the history', async () => {
    await page.goto(at('/#/projects'));
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    await page.goto(at(`/#/login?next=${encodeURIComponent(`#/register?path=${encodeURIComponent(home)}`)}`));
    await page.getByRole('heading', { name: 'Register a folder' }).waitFor();
    expect(new URL(page.url()).hash).toBe(`#/register?path=${encodeURIComponent(home)}`);
    expect(await page.getByLabel('Password').count()).toBe(0);
    await expect.poll(() => page.getByLabel('Folder path').inputValue()).toBe(home);
    // Back skips the login entry (it would only send the person forward again).
    await page.goBack();
    await expect.poll(() => new URL(page.url()).hash).toBe('#/projects');
  });

  it('never leaves this page for anything else: another site, a scheme, a path, or itself', async () => {
    const origin = new URL(gw.url).origin;
    for (const next of ['https://attacker.example/', '//attacker.example/x', '/\\attacker.example', 'javascript:alert(1)', '/p/whatever/', '#/login?next=%23%2Fregister']) {
      // From a blank page, so each goto loads the dashboard afresh: a goto that only changes the hash
      // would find the previous round's Projects heading before the app had read the new hash.
      await page.goto('about:blank');
      await page.goto(at(`/#/login?next=${encodeURIComponent(next)}`));
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
      // Every one ends at the projects (the login view's own loop too), on this origin and path.
      await expect.poll(() => new URL(page.url()).hash).toBe('#/projects');
      expect([next, new URL(page.url()).origin, new URL(page.url()).pathname]).toEqual([next, origin, '/']);
      expect(await page.getByLabel('Password').count()).toBe(0);
    }
    expect(seen).toEqual({ dialogs: [], errors: [] });
  });
});
