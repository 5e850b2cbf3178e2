import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHubServer } from '../src/gateway/hub-server.js';
import { bindPublic } from '../src/http/bind.js';
import { serveProject, type Served } from '../src/http/serve.js';
import { removeEndpointRecord } from '../src/store/host/endpoint-record.js';
import { encodeProject } from '../src/store/trellis-home.js';
import { readEndpointRecord } from '../src/store/host/online-verdict.js';
import { hashPassword, verifyPassword } from '../src/store/host/hub-config.js';
import { openProject } from '../src/store/compose/open-project.js';
import { screenshot, VIEWPORTS, desktopPage } from './helpers/browser.js';
import { screens34 as shots } from './helpers/screens-34.js';
import { json, publishRecord, raw, startTestGateway, until, type TestGateway, catalogProjects } from './helpers/gateway.js';
import { cleanupRepos, ROOT, tempDir, tempRepo } from './helpers/repo.js';
import { demoRepo } from './helpers/server.js';

/**
 * The host home in a real Chromium against a real gateway: the live project list, starting a project's
 * backend from the page, registering a folder, doctor's transcript, the trellis.json editor's conflicts,
 * and the login flow of a hub with a password.
 */

let home: string;
let gw: TestGateway;
let online: string;
let offline: string;
let backend: Served;
let browser: Browser;
let page: Page;
let seen: { dialogs: string[]; errors: string[] };
const started: number[] = [];

const at = (path: string) => new URL(path, gw.url).href;
const row = (root: string) => page.getByTestId(`project-${encodeProject(root)}`);

beforeAll(async () => {
  home = tempDir();
  online = await demoRepo();
  offline = tempRepo();
  writeFileSync(join(offline, 'trellis.json'), '{\n  "name": "Offline Co"\n}\n');
  backend = await serveProject(openProject(online), { port: 0 });
  await publishRecord(home, online, backend.url, backend.instanceId);
  gw = await startTestGateway(home);
  for (const path of [online, offline]) expect((await raw(at('/projects'), { method: 'POST', body: JSON.stringify({ path }) })).status).toBe(201);
  ({ browser, page, seen } = await desktopPage());
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await backend?.close();
  for (const pid of started) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  // A killed supervisor's child exits when its parent's IPC channel closes.
  if (started.length) await until(() => !execFileSync('ps', ['-eo', 'args']).toString().includes(offline) || undefined, 'the detached serve to be gone', 15_000);
  cleanupRepos();
}, 30_000);

describe('the host home at the gateway’s /', () => {
  it('lists both registered projects live, with the right online state and the online one’s counts', async () => {
    await page.goto(gw.url);
    await page.getByTestId('link-state').filter({ hasText: 'live' }).waitFor({ timeout: 10_000 });
    await expect.poll(() => row(online).getAttribute('data-online')).toBe('true');
    expect(await row(offline).getAttribute('data-online')).toBe('false');
    expect(await row(online).getByTestId('online-state').textContent()).toBe('online');
    expect(await row(offline).getByTestId('online-state').textContent()).toBe('offline');
    const openIssues = (json(await raw(at('/projects'))).projects as { root: string; openIssues: number }[]).find((p) => p.root === online)!.openIssues;
    expect(openIssues).toBeGreaterThan(0);
    expect(await row(online).getByTestId('open-issues').textContent()).toBe(`${openIssues} open issues`);
    expect(await row(offline).getByText('Offline Co').count()).toBe(1);
    expect(await page.title()).toBe('Projects · Trellis');
    await screenshot(page, 'projects');
  });

  it('moves through the list with the arrow keys, with a visible focus ring', async () => {
    const links = page.locator('.projects [data-nav]');
    expect(await links.count()).toBe(2);
    await links.first().focus();
    await page.keyboard.press('ArrowDown');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(await links.nth(1).textContent());
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement!).outlineStyle);
    expect(outline).not.toBe('none');
    await page.keyboard.press('Home');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(await links.first().textContent());
  });

  it('starts the offline project from the page; its row turns online without a reload, and Open leads to its board and back', async () => {
    await page.evaluate(() => ((window as unknown as { __sameDocument: number }).__sameDocument = 42));
    await page.getByRole('button', { name: 'Start Offline Co' }).click();
    await expect.poll(() => row(offline).getAttribute('data-online'), { timeout: 30_000 }).toBe('true');
    const verdict = await readEndpointRecord(home, offline);
    if (verdict.online) started.push(verdict.record.pid);
    expect(verdict.online).toBe(true);
    // The same document: no reload happened.
    expect(await page.evaluate(() => (window as unknown as { __sameDocument?: number }).__sameDocument)).toBe(42);
    await row(offline).getByRole('link', { name: 'Open' }).click();
    await page.waitForURL(`**/p/${encodeProject(offline)}/`);
    await page.getByTestId('link-state').filter({ hasText: 'live' }).waitFor({ timeout: 15_000 });
    await page.getByRole('link', { name: 'All projects' }).click();
    await page.waitForURL(gw.url);
    await row(offline).waitFor();
  }, 60_000);

  it('runs doctor in a project and shows its transcript', async () => {
    await page.goto(at(`/#/projects/${encodeProject(online)}`));
    await page.getByRole('button', { name: 'Run doctor' }).click();
    const transcript = page.getByTestId('transcript');
    await transcript.waitFor({ timeout: 30_000 });
    expect(await transcript.textContent()).toMatch(/^\$ trellis doctor\n/);
    expect(await page.getByTestId('exit-code').textContent()).toMatch(/^exit code \d+$/);
  }, 40_000);

  it('edits trellis.json; a write made meanwhile is shown as a conflict and never overwritten', async () => {
    const file = join(offline, 'trellis.json');
    await page.goto(at(`/#/projects/${encodeProject(offline)}`));
    const text = page.getByTestId('config-text');
    await expect.poll(() => text.inputValue()).toBe(readFileSync(file, 'utf8'));
    await text.fill('{\n  "name": "Renamed by the page"\n}\n');
    // Someone else writes the file after the page read it.
    writeFileSync(file, '{\n  "name": "Renamed by an editor"\n}\n');
    await page.getByRole('button', { name: 'Save' }).click();
    const conflict = page.getByTestId('config-conflict');
    await conflict.waitFor();
    expect(await conflict.textContent()).toContain('Renamed by an editor');
    expect(await text.inputValue()).toContain('Renamed by the page');
    expect(readFileSync(file, 'utf8')).toContain('Renamed by an editor');
    await screenshot(page, 'project-config-conflict');
    // Choosing to keep the edit, then saving, writes it against the new revision.
    await page.getByRole('button', { name: 'Keep my edit over it (then Save)' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText(/^Saved \(revision/).waitFor();
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ name: 'Renamed by the page' });
    // The list follows the rename live.
    await page.goto(gw.url);
    await row(offline).getByText('Renamed by the page').waitFor();
  }, 30_000);

  it('registers a plain folder through the directory browser only with the explicit git-init choice, running init with a harness', async () => {
    const parent = tempDir();
    const plain = join(parent, 'plain-folder');
    mkdirSync(plain);
    await page.goto(at(`/#/register?path=${encodeURIComponent(parent)}`));
    await page.getByTestId('folder-plain-folder').waitFor();
    // Issue 34: a typed path that does not exist shows that, and nothing of the folder listed before it
    // (whose Register button would register that other folder); the typed path stays in the box.
    const missing = join(parent, 'no-such-folder');
    await page.getByLabel('Folder path').fill(missing);
    await page.getByRole('button', { name: 'Go' }).click();
    await page.getByRole('alert').waitFor();
    expect([await page.getByTestId('folder-plain-folder').count(), await page.getByRole('button', { name: 'Register' }).count(), await page.getByLabel('Folder path').inputValue()]).toEqual([0, 0, missing]);
    expect(await page.getByRole('alert').textContent()).toContain('There is no folder at that path.');
    await shots(page, 'register-missing-folder');
    await page.goto(at(`/#/register?path=${encodeURIComponent(parent)}`));
    await page.getByTestId('folder-plain-folder').click();
    await expect.poll(() => page.getByLabel('Folder path').inputValue()).toBe(plain);
    await page.getByTestId('folder-kind').filter({ hasText: 'Not a git repository' }).waitFor();
    // Without the choice, nothing happens to the folder; the page says which box to tick, in its words.
    await page.getByRole('button', { name: 'Register' }).click();
    const refusal = page.getByRole('alert').filter({ hasText: 'This folder is not in a git repository' });
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('Tick “Create a git repository here” and click Register again.');
    expect(await refusal.textContent()).not.toMatch(/gitInit|--git|trellis projects/);
    await shots(page, 'register-refused');
    expect((json(await raw(at('/projects'))).projects as { root: string }[]).some((p) => p.root === plain)).toBe(false);
    await page.getByLabel('Create a git repository here').check();
    // A newcomer's choice is the default: auto (the first agent installed at each spawn, else shell).
    const choice = page.getByLabel('Harness for its agent sessions');
    expect(await choice.inputValue()).toBe('auto');
    expect(await choice.locator('option:checked').textContent()).toBe('auto: the first agent installed, else shell');
    await choice.selectOption('shell');
    await page.getByRole('button', { name: 'Register' }).click();
    await page.getByTestId('registered').waitFor({ timeout: 30_000 });
    const transcript = await page.getByTestId('transcript').textContent();
    expect(transcript).toContain('$ git init');
    expect(transcript).toContain('$ trellis init --harness shell');
    expect(JSON.parse(readFileSync(join(plain, 'trellis.json'), 'utf8')).harness).toBe('shell');
    expect((json(await raw(at('/projects'))).projects as { root: string }[]).some((p) => p.root === plain)).toBe(true);
    // Issue 34: registered, the card no longer offers Register (a second click could only be refused); it
    // links to the project instead, and says so again when the folder is opened later.
    expect(await page.getByRole('button', { name: 'Register' }).count()).toBe(0);
    await page.getByRole('link', { name: 'Open plain-folder' }).waitFor();
    await screenshot(page, 'register');
    await shots(page, 'register-done');
    await page.goto(at(`/#/register?path=${encodeURIComponent(parent)}`));
    await page.getByTestId('folder-plain-folder').click();
    await page.getByTestId('registered').filter({ hasText: 'Already registered as plain-folder' }).waitFor();
    expect(await page.getByRole('button', { name: 'Register' }).count()).toBe(0);
  }, 40_000);

  it('a project only being served says why it will leave the list; once its serve stops, its offline page offers Start it and Register it (buttons), and started it is back on the list with Register to keep it', async () => {
    const side = tempRepo();
    writeFileSync(join(side, 'trellis.json'), '{}\n');
    const served = await serveProject(openProject(side), { port: 0 });
    await publishRecord(home, side, served.url, served.instanceId);
    await page.goto(gw.url);
    await row(side).waitFor({ timeout: 15_000 });
    expect(await row(side).getByTestId('served-only').textContent()).toContain('Served, not registered: it leaves this list when its serve stops.');
    expect(await row(online).getByTestId('served-only').count()).toBe(0);
    for (const vp of [VIEWPORTS.desktop, VIEWPORTS.phone]) {
      await page.setViewportSize(vp);
      await page.screenshot({ path: join(ROOT, 'test-results', 'screens-34', 'demo', `served-only-${vp.width}x${vp.height}.png`) });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(vp.width);
    }
    await page.setViewportSize(VIEWPORTS.desktop);
    // Its serve stops (its record goes, as a serve's clean exit removes it): the row leaves the list, and the
    // catalog was never written.
    await served.close();
    expect(removeEndpointRecord(home, side, served.instanceId)).toBe(true);
    await expect.poll(() => row(side).count(), { timeout: 15_000 }).toBe(0);
    expect(readFileSync(join(home, 'projects.json'), 'utf8')).not.toContain(side);

    await page.goto(at(`/p/${encodeProject(side)}/#/board`));
    const card = page.getByTestId('project-offline');
    await card.getByRole('button', { name: 'Register it' }).waitFor({ timeout: 15_000 });
    const words = await card.textContent();
    expect(words).toContain(`It lives in ${side}.`);
    expect(words).toContain('It was being served without being registered, so it left the projects list when that serve stopped.');
    expect(words).not.toMatch(/POST|\/projects\/|trellis serve/);
    for (const vp of [VIEWPORTS.desktop, VIEWPORTS.phone]) {
      await page.setViewportSize(vp);
      await page.screenshot({ path: join(ROOT, 'test-results', 'screens-34', 'demo', `offline-${vp.width}x${vp.height}.png`) });
    }
    await page.setViewportSize(VIEWPORTS.desktop);
    // Start it, unregistered: the page opens the project by itself once its backend answers.
    await card.getByRole('button', { name: 'Start it' }).click();
    await page.getByTestId('link-state').filter({ hasText: 'live' }).waitFor({ timeout: 30_000 });
    const verdict = await readEndpointRecord(home, side);
    if (verdict.online) started.push(verdict.record.pid);
    expect(verdict.online).toBe(true);
    expect(new URL(page.url()).pathname).toBe(`/p/${encodeProject(side)}/`);
    // Served again, so listed again, still unregistered: the row's button is the explicit choice.
    await page.goto(gw.url);
    await row(side).getByRole('button', { name: `Register ${basename(side)}` }).click();
    await expect.poll(() => row(side).getByTestId('served-only').count(), { timeout: 15_000 }).toBe(0);
    expect(readFileSync(join(home, 'projects.json'), 'utf8')).toContain(side);
    expect(seen.errors).toEqual([]);
  }, 60_000);

  it('labels every control, and works at 390×844', async () => {
    const pages: [string, string][] = [
      ['#/projects', `[data-testid="project-${encodeProject(online)}"]`],
      [`#/projects/${encodeProject(offline)}`, '[data-testid="config-text"]'],
      // A folder not registered yet (a registered one shows where it is registered instead of the form).
      [`#/register?path=${encodeURIComponent(tempDir())}`, '[data-testid="folder-kind"]'],
      [`#/register?path=${encodeURIComponent(offline)}`, '[data-testid="registered"]'],
    ];
    for (const [hash, ready] of pages) {
      await page.goto(at(`/${hash}`));
      await page.locator(ready).waitFor();
      const unlabelled = await page.evaluate(() =>
        Array.from(document.querySelectorAll('input, select, textarea, button'))
          .filter((e) => {
            const el = e as HTMLInputElement;
            return !(el.labels?.length || el.getAttribute('aria-label') || (el.tagName === 'BUTTON' && el.textContent?.trim()));
          })
          .map((e) => e.outerHTML),
      );
      expect([hash, unlabelled]).toEqual([hash, []]);
    }
    const phone = await browser.newPage({ viewport: VIEWPORTS.phone });
    await phone.goto(gw.url);
    await phone.getByTestId(`project-${encodeProject(online)}`).waitFor();
    // Nothing wider than the screen.
    expect(await phone.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await screenshot(phone, 'projects');
    await phone.close();
    expect(seen).toEqual({ dialogs: [], errors: [] });
  });

  it('shows "reconnecting" while the gateway is away and recovers by itself when it is back', async () => {
    await page.goto(gw.url);
    await page.getByTestId('link-state').filter({ hasText: 'live' }).waitFor({ timeout: 10_000 });
    const port = gw.port;
    await gw.close();
    await page.getByTestId('link-state').filter({ hasText: 'reconnecting' }).waitFor({ timeout: 10_000 });
    const hub = createHubServer({ home, tls: false });
    await bindPublic(hub.server, port, '127.0.0.1');
    gw = { hub, port, url: gw.url, close: () => hub.close() };
    await page.getByTestId('link-state').filter({ hasText: 'live' }).waitFor({ timeout: 15_000 });
    await row(online).waitFor();
  }, 40_000);
});

describe('the login view of a hub with a password', () => {
  const PASSWORD = 'correct horse battery staple';
  let home2: string;
  let gw2: TestGateway;
  let root: string;

  beforeAll(async () => {
    home2 = tempDir();
    root = tempRepo();
    writeFileSync(join(home2, 'hub.json'), JSON.stringify({ adminPassword: await hashPassword(PASSWORD) }));
    catalogProjects(home2, [root]);
    gw2 = await startTestGateway(home2);
  });
  afterAll(() => gw2?.close());

  it('asks for the password, refuses a wrong one, then continues to the view it was going to; logout asks again', async () => {
    await page.goto(new URL('/#/register', gw2.url).href);
    const password = page.getByLabel('Password');
    await password.waitFor();
    expect(await page.getByRole('link', { name: 'Register' }).count()).toBe(0);
    await screenshot(page, 'login');
    await password.fill('wrong');
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('alert').filter({ hasText: 'That password is wrong.' }).waitFor();
    await shots(page, 'login-wrong-password');
    await password.fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Register a folder' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/register');
    await page.getByRole('link', { name: 'Projects' }).first().click();
    await page.getByTestId(`project-${encodeProject(root)}`).waitFor();
    // A login that ends elsewhere (a new password ends every session) ends the open stream too, and the
    // page shows the form instead of a list it may no longer read.
    writeFileSync(join(home2, 'hub.json'), JSON.stringify({ adminPassword: await hashPassword(PASSWORD) }));
    await page.getByLabel('Password').waitFor({ timeout: 10_000 });
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByTestId(`project-${encodeProject(root)}`).waitFor();
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByLabel('Password').waitFor();
    expect((await raw(new URL('/projects', gw2.url).href)).status).toBe(401);
    const phone = await browser.newPage({ viewport: VIEWPORTS.phone });
    await phone.goto(gw2.url);
    await phone.getByLabel('Password').waitFor();
    await screenshot(phone, 'login');
    await phone.close();
  }, 30_000);

  it('a gated project’s page asks for the login first, then shows that project (here: offline)', async () => {
    // The gateway answers the page itself (so a login form can show); its API stays a JSON refusal.
    const pageRes = await raw(new URL(`/p/${encodeProject(root)}/`, gw2.url).href);
    expect([pageRes.status, pageRes.headers['content-type'], pageRes.headers['cache-control']]).toEqual([200, 'text/html; charset=utf-8', 'no-cache']);
    const apiRes = await raw(new URL(`/p/${encodeProject(root)}/api/graph`, gw2.url).href);
    expect([apiRes.status, json(apiRes).error.code]).toEqual([401, 'UNAUTHENTICATED']);
    expect((await raw(new URL(`/p/${encodeProject(root)}/health`, gw2.url).href)).status).toBe(401);
    await page.goto(new URL(`/p/${encodeProject(root)}/#/issues`, gw2.url).href);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByTestId('project-offline').waitFor();
    expect(new URL(page.url()).hash).toBe('#/issues');
    expect(seen.dialogs).toEqual([]);
  }, 30_000);
});

describe('the admin password from the page (issue 34)', () => {
  let home3: string;
  let gw3: TestGateway;
  beforeAll(async () => {
    home3 = tempDir();
    gw3 = await startTestGateway(home3);
  });
  afterAll(() => gw3?.close());

  it('first run on this machine: set it from the page; later: change it with the current one, which logs every other browser out', async () => {
    const hubFile = join(home3, 'hub.json');
    const stored = () => (existsSync(hubFile) ? (JSON.parse(readFileSync(hubFile, 'utf8')) as { adminPassword?: string }).adminPassword : undefined);
    await page.goto(gw3.url);
    await page.getByTestId('password-link').filter({ hasText: 'Set a password' }).click();
    await page.getByRole('heading', { name: 'Set an admin password' }).waitFor();
    expect(await page.getByLabel('Current password').count()).toBe(0);
    await shots(page, 'password-first');
    // Checked in the page before anything is sent.
    await page.getByLabel('New password', { exact: true }).fill('short');
    await page.getByLabel('New password again').fill('short');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('alert').filter({ hasText: 'needs at least 8 characters' }).waitFor();
    await page.getByLabel('New password', { exact: true }).fill('first password');
    await page.getByLabel('New password again').fill('first passwort');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByRole('alert').filter({ hasText: 'The two new passwords differ' }).waitFor();
    expect(stored()).toBeUndefined();
    await page.getByLabel('New password again').fill('first password');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.getByTestId('password-done').filter({ hasText: 'The admin password is set' }).waitFor();
    expect(await verifyPassword('first password', stored()!)).toBe(true);
    await shots(page, 'password-set');
    // This browser set it and stays admin: the projects, no login form.
    await page.getByRole('link', { name: 'Back to the projects' }).click();
    await page.getByRole('heading', { name: 'Projects' }).waitFor();
    expect(await page.getByTestId('login').count()).toBe(0);

    // Another browser logs in with it.
    const other = await browser.newPage({ viewport: VIEWPORTS.phone });
    try {
      await other.goto(gw3.url);
      await other.getByLabel('Password').fill('first password');
      await other.getByRole('button', { name: 'Log in' }).click();
      await other.getByRole('heading', { name: 'Projects' }).waitFor();

      await page.getByTestId('password-link').filter({ hasText: 'Password' }).click();
      await page.getByRole('heading', { name: 'Change the admin password' }).waitFor();
      await page.getByLabel('Current password').fill('not the password');
      await page.getByLabel('New password', { exact: true }).fill('second password');
      await page.getByLabel('New password again').fill('second password');
      await page.getByRole('button', { name: 'Change password' }).click();
      const wrong = page.getByRole('alert').filter({ hasText: 'The current password is wrong; nothing was changed.' });
      await wrong.waitFor();
      // A wrong current password is this form's answer: the page does not turn into the login form.
      expect(await page.getByTestId('login').count()).toBe(0);
      await shots(page, 'password-wrong-current');
      await page.getByLabel('Current password').fill('first password');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.getByTestId('password-done').filter({ hasText: 'Every other browser has been logged out' }).waitFor();
      expect(await verifyPassword('second password', stored()!)).toBe(true);
      // The other browser is logged out; this one is not.
      await other.reload();
      await other.getByTestId('login').waitFor();
      await page.getByRole('link', { name: 'Back to the projects' }).click();
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
      expect(await page.getByTestId('login').count()).toBe(0);
    } finally {
      await other.close();
    }
    expect(seen.dialogs).toEqual([]);
  }, 40_000);
});
