import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProject } from '../src/store/trellis-home.js';
import { hashPassword } from '../src/store/host/hub-config.js';
import { screenshot, desktopPage } from './helpers/browser.js';
import { startTestGateway, type TestGateway, catalogProjects } from './helpers/gateway.js';
import { cleanupRepos, ok, tempDir, testEnv } from './helpers/repo.js';
import { packageCopy, startServe, type ServeProcess } from './helpers/serve.js';
import { demoRepo } from './helpers/server.js';
import { killTmux, tmuxHas } from './helpers/sessions.js';
import WebSocket from 'ws';

/**
 * The dashboard as a person behind a real gateway with a password uses it: log in, open a project at
 * `/p/<id>/`, spawn a shell session and type into its terminal, every request and the pane's WebSocket
 * going through the gateway's proxy to a real `trellis serve` (tmux on this test's own socket).
 * The refusal of a cross-site WebSocket upgrade to `/p/<id>/…` without a login is the table test in
 * gateway-auth.test.ts ("a mutation with a foreign Origin, or a WebSocket upgrade from one → refused");
 * here it is the logged-in case: the browser's own cookie on a foreign Origin opens no pane.
 */

const PASSWORD = 'correct horse battery staple';

let dir: string;
let home: string;
let id: string;
let s: ServeProcess;
let gw: TestGateway;
let browser: Browser;
let page: Page;
let seen: { dialogs: string[]; errors: string[] };
const sockets: string[] = [];
let sessionId: string;

const cli = (...args: string[]) => ok(dir, args, { env: { TRELLIS_HOME: home } });
const at = (path: string) => new URL(path, gw.url).href;
const rows = () => page.locator('.xterm-rows > div').evaluateAll((els) => els.map((e) => (e.textContent ?? '').replace(/\s+$/, '')));
const showsLine = async (text: string) => (await rows()).includes(text);
const paneState = () => page.getByTestId('pane-state').textContent({ timeout: 1_000 });

beforeAll(async () => {
  dir = await demoRepo();
  home = tempDir();
  writeFileSync(join(home, 'hub.json'), JSON.stringify({ adminPassword: await hashPassword(PASSWORD) }));
  catalogProjects(home, [dir]);
  id = encodeProject(dir);
  s = await startServe(packageCopy(), dir, { ...testEnv(dir), TRELLIS_HOME: home });
  gw = await startTestGateway(home);
  ({ browser, page, seen } = await desktopPage());
  page.on('websocket', (ws) => sockets.push(ws.url()));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await s?.stop('SIGKILL');
  killTmux(home);
  cleanupRepos();
});

describe('a session terminal through the gateway', () => {
  it('logs in, spawns a shell session at /p/<id>/, and `echo hello` typed into its terminal reaches the pane over the proxied WebSocket', async () => {
    await page.goto(at(`/p/${id}/#/sessions`));
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByTestId('link-state').filter({ hasText: 'live' }).waitFor({ timeout: 10_000 });
    expect(new URL(page.url()).hash).toBe('#/sessions');

    await page.getByLabel('Harness').selectOption('shell');
    await page.getByLabel('Task').fill('Through the gateway');
    await page.getByRole('button', { name: 'Spawn' }).click();
    await expect.poll(() => page.url()).toMatch(/#\/sessions\/[^/]+$/);
    sessionId = decodeURIComponent(/#\/sessions\/(.+)$/.exec(page.url())![1]!);
    expect(tmuxHas(home, sessionId)).toBe(true);
    await expect.poll(() => paneState(), { timeout: 10_000 }).toBe('live');

    await page.locator('.terminal-frame .xterm').click();
    await page.keyboard.type('echo hello');
    await page.keyboard.press('Enter');
    await expect.poll(() => showsLine('hello'), { timeout: 15_000 }).toBe(true);
    const captured = await cli('session', 'capture', sessionId);
    expect(captured.split('\n').map((l) => l.trimEnd())).toContain('hello');

    // The pane's socket is the gateway's, under the project's prefix: nothing went to the backend directly.
    const gateway = new URL(gw.url);
    const panes = sockets.filter((u) => u.includes(`/api/sessions/${encodeURIComponent(sessionId)}/socket`));
    expect(panes.length).toBeGreaterThan(0);
    for (const u of panes) {
      const url = new URL(u);
      expect([url.protocol, url.host, url.pathname.startsWith(`/p/${id}/`)]).toEqual(['ws:', gateway.host, true]);
    }
    expect(sockets.some((u) => u.includes(new URL(s.url).host))).toBe(false);
    await screenshot(page, 'session-via-gateway');
    expect(seen).toEqual({ dialogs: [], errors: [] });

    // Cross-site WebSocket hijacking: the logged-in cookie, sent by another site's page, opens nothing.
    const cookie = (await page.context().cookies(gw.url)).map((c) => `${c.name}=${c.value}`).join('; ');
    expect(cookie).not.toBe('');
    const socket = at(`/p/${id}/api/sessions/${encodeURIComponent(sessionId)}/socket`).replace(/^http/, 'ws');
    expect(await upgradeStatus(socket, { Cookie: cookie, Origin: 'http://attacker.example' })).toBe(403);
    expect(await upgradeStatus(socket, { Origin: gateway.origin })).toBe(401);
    expect(await upgradeStatus(socket, { Cookie: cookie, Origin: gateway.origin })).toBe(101);
  }, 60_000);

  it('fetches the review bundle (git runs for it) again only when the session itself changed, not on every board revision', async () => {
    const counts = { review: 0, session: 0, graph: 0 };
    const base = `/p/${id}/api/sessions/${encodeURIComponent(sessionId)}`;
    let inFlight = 0;
    const isGet = (r: Request) => r.method() === 'GET' && new URL(r.url()).pathname.startsWith(`/p/${id}/api/`) && !r.url().includes('/api/graph/stream');
    const count = (r: Request) => {
      if (!isGet(r)) return;
      inFlight++;
      const path = new URL(r.url()).pathname;
      if (path === `${base}/review`) counts.review++;
      else if (path === base) counts.session++;
      else if (path === `/p/${id}/api/graph`) counts.graph++;
    };
    const done = (r: Request) => void (isGet(r) && inFlight--);
    /** No API GET in flight across three rendered frames: the effects a change started have run. */
    const settled = async () => {
      for (let quiet = 0; quiet < 3; ) {
        await expect.poll(() => inFlight, { timeout: 15_000 }).toBe(0);
        await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
        quiet = inFlight === 0 ? quiet + 1 : 0;
      }
    };
    page.on('request', count);
    page.on('requestfinished', done);
    page.on('requestfailed', done);
    try {
      await page.goto(at(`/p/${id}/#/sessions/${encodeURIComponent(sessionId)}`));
      await expect.poll(() => paneState(), { timeout: 10_000 }).toBe('live');
      await page.getByRole('button', { name: 'Load the review bundle' }).click();
      await expect.poll(() => page.getByTestId('preflight').count(), { timeout: 10_000 }).toBe(1);
      expect(counts.review).toBe(1);

      // Writes that are not this session's: each is a board revision the page hears (it reads the board
      // again), and neither the bundle nor the session is read again: the change names another thread.
      await settled();
      const session = counts.session;
      for (const concern of ['Unrelated one', 'Unrelated two', 'Unrelated three']) {
        const before = counts.graph;
        await cli('issue', 'open', concern);
        await expect.poll(() => counts.graph, { timeout: 15_000 }).toBeGreaterThan(before);
        await settled();
      }
      expect({ review: counts.review, session: counts.session - session }).toEqual({ review: 1, session: 0 });

      // The session's own change (it is put up for review) fetches it again: its state changed, and the
      // stream names a session event, a cause that can move a review (issue 29's page that stays true).
      await cli('session', 'review', sessionId);
      await expect.poll(() => page.getByTestId('session-state').first().textContent(), { timeout: 15_000 }).toMatch(/^review/);
      await expect.poll(() => counts.review, { timeout: 15_000 }).toBeGreaterThanOrEqual(2);
      await page.getByTestId('preflight').waitFor();
    } finally {
      page.off('request', count);
      page.off('requestfinished', done);
      page.off('requestfailed', done);
    }
  }, 60_000);
});

/** The status a WebSocket upgrade gets: 101 when it opened (then closed at once), else the refusal's. */
function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.on('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('error', reject);
  });
}
