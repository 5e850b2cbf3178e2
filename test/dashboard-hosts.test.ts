import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProject } from '../src/store/trellis-home.js';
import { desktopPage, screenshot } from './helpers/browser.js';
import { json, raw, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { BIN, cleanupRepos, ok, ROOT, tempDir, testEnv } from './helpers/repo.js';
import { startServe, type ServeProcess } from './helpers/serve.js';
import { demoRepo } from './helpers/server.js';
import { killTmux } from './helpers/sessions.js';
import { startSshd, type TestSshd } from './helpers/sshd.js';

// Issue 31 in a real Chromium: a project on another host (a second TRELLIS_HOME, reached only through a
// real sshd of the test's own) opened from the one dashboard: its board and an issue, a shell session
// spawned and typed into, its waiting session in the host inbox saying which host.

let sshd: TestSshd;
let serve: ServeProcess;
let gw: TestGateway;
let browser: Browser;
let page: Page;
let seen: { dialogs: string[]; errors: string[] };
let remoteRoot: string;
let remoteHome: string;
let localHome: string;
let id: string;

const remote = (...args: string[]) => ok(remoteRoot, args, { env: { TRELLIS_HOME: remoteHome } });
const rows = () => page.locator('.xterm-rows > div').evaluateAll((els) => els.map((e) => (e.textContent ?? '').replace(/\s+$/, '')));

beforeAll(async () => {
  remoteRoot = await demoRepo();
  remoteHome = tempDir();
  localHome = tempDir();
  sshd = await startSshd();
  serve = await startServe(ROOT, remoteRoot, { ...testEnv(remoteRoot), TRELLIS_HOME: remoteHome });
  id = `box~${encodeProject(remoteRoot)}`;
  gw = await startTestGateway(localHome);
  ({ browser, page, seen } = await desktopPage());
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await serve?.stop('SIGKILL');
  await sshd?.kill();
  killTmux(remoteHome);
  cleanupRepos();
});

describe('a project on another host, in the page', () => {
  it('shows on the host page with its host; its board, an issue and a live terminal work through /p over SSH; its waiting session is in the host inbox', async () => {
    await page.goto(gw.url);
    // The machine is added from the host page's form (POST /hub/hosts, the verb `trellis hosts add` runs).
    const form = page.getByRole('form', { name: 'Add a machine' });
    await form.getByLabel('Name').fill('box');
    await form.getByLabel('SSH destination').fill('remote');
    await form.getByLabel('Trellis command there (optional)').fill(`env TRELLIS_HOME=${remoteHome} ${process.execPath} ${BIN}`);
    await form.getByLabel('SSH config file (optional)').fill(sshd.sshConfig);
    await form.getByRole('button', { name: 'Add machine' }).click();
    await expect.poll(() => page.getByTestId('host-box').getByTestId('host-state').textContent(), { timeout: 20_000 }).toBe('connected');
    expect(JSON.parse(await ok(ROOT, ['hosts', 'ls', '--json'], { env: { TRELLIS_HOME: localHome } })).hosts.map((h: { name: string }) => h.name)).toEqual(['box']);
    const row = page.getByTestId(`project-${id}`);
    await row.and(page.locator('[data-online=true]')).waitFor({ timeout: 20_000 });
    expect(await row.getByTestId('host').textContent()).toBe('on box');
    await page.getByTestId('host-box').scrollIntoViewIfNeeded();
    await screenshot(page, 'hosts-home');

    // An issue opened on that host, read in the page through the tunnel.
    const issue = JSON.parse(await remote('issue', 'open', 'Opened on the box', '--by', 'tester', '--json')) as { id: string };
    await page.goto(new URL(`/p/${id}/#/issues/${encodeURIComponent(issue.id)}`, gw.url).href);
    await page.getByTestId('link-state').filter({ hasText: 'live' }).waitFor({ timeout: 15_000 });
    await page.getByText('Opened on the box').first().waitFor({ timeout: 10_000 });
    await page.goto(new URL(`/p/${id}/#/board`, gw.url).href);
    await page.getByTestId('link-state').filter({ hasText: 'live' }).waitFor({ timeout: 15_000 });

    // A shell session spawned from the page runs on that host; what is typed comes back through the hop.
    await page.goto(new URL(`/p/${id}/#/sessions`, gw.url).href);
    await page.getByLabel('Harness').selectOption('shell');
    await page.getByLabel('Task').fill('Work on the box');
    await page.getByRole('button', { name: 'Spawn' }).click();
    await expect.poll(() => page.url(), { timeout: 15_000 }).toMatch(/#\/sessions\/[^/]+$/);
    const session = decodeURIComponent(/#\/sessions\/(.+)$/.exec(page.url())![1]!);
    await expect.poll(() => page.getByTestId('pane-state').textContent({ timeout: 1_000 }), { timeout: 15_000 }).toBe('live');
    await page.locator('.terminal-frame .xterm').click();
    await page.keyboard.type('echo over-$((6*7))-ssh');
    await page.keyboard.press('Enter');
    await expect.poll(async () => (await rows()).includes('over-42-ssh'), { timeout: 15_000 }).toBe(true);
    expect(await remote('session', 'capture', session)).toContain('over-42-ssh');

    // The session starts waiting on the box: the host inbox here lists it, naming the host.
    await remote('session', 'signal', session, 'turn-end');
    await page.goto(new URL('#/inbox', gw.url).href);
    const entry = page.locator(`[data-testid=inbox] [data-session="${session}"]`);
    await entry.waitFor({ timeout: 20_000 });
    expect(await entry.locator('.chip.project').textContent()).toMatch(/ on box$/);
    // Nothing of the gateway's reached the remote backend's page as an error.
    expect(seen.dialogs).toEqual([]);
    expect(json(await raw(new URL('/projects', gw.url).href)).projects.find((p: { id: string }) => p.id === id).inbox).toHaveLength(1);

    // sshd goes away: the page shows the machine and its project offline, with ssh's words; then both come back by themselves.
    await page.goto(gw.url);
    await sshd.kill();
    try {
      await page.getByTestId(`project-${id}`).and(page.locator('[data-online=false]')).waitFor({ timeout: 20_000 });
      await page.getByTestId('host-box').and(page.locator('[data-state=offline]')).waitFor({ timeout: 20_000 });
      // ssh's own words from its reconnect attempts.
      await expect.poll(() => page.getByTestId('host-box').getByTestId('host-reason').textContent(), { timeout: 15_000 }).toMatch(/^SSH said: .*Connection refused/);
    } finally {
      await sshd.start();
    }
    await page.getByTestId(`project-${id}`).and(page.locator('[data-online=true]')).waitFor({ timeout: 30_000 });
    expect(await page.getByTestId('host-box').getByTestId('host-state').textContent()).toBe('connected');
  }, 120_000);
});
