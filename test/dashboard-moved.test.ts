import type { Browser, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { desktopPage } from './helpers/browser.js';
import { cleanupRepos, ok, tempDir, testEnv } from './helpers/repo.js';
import { packageCopy, startServe, type ServeProcess } from './helpers/serve.js';
import { demoRepo } from './helpers/server.js';
import { killTmux, waitFor } from './helpers/sessions.js';

// Issue 40, deliverable 3: the page refetches only what a change event names. An open thread page pays at
// most one GET for a reply made elsewhere; an open session page at most two for an agent's hook event.

let dir: string;
let home: string;
let s: ServeProcess;
let browser: Browser;
let page: Page;
const gets: string[] = [];
let inFlight = 0;

const cli = (...args: string[]) => ok(dir, args, { env: { TRELLIS_HOME: home } });
const isApiGet = (r: Request) => r.method() === 'GET' && new URL(r.url()).pathname.startsWith('/api/') && !r.url().includes('/api/graph/stream');

beforeAll(async () => {
  dir = await demoRepo();
  home = tempDir();
  s = await startServe(packageCopy(), dir, { ...testEnv(dir), TRELLIS_HOME: home });
  ({ browser, page } = await desktopPage());
  page.on('request', (r) => {
    if (!isApiGet(r)) return;
    inFlight++;
    gets.push(new URL(r.url()).pathname);
  });
  const done = (r: Request) => isApiGet(r) && inFlight--;
  page.on('requestfinished', done);
  page.on('requestfailed', done);
});

afterAll(async () => {
  await browser?.close();
  await s?.stop('SIGKILL');
  killTmux(home);
  cleanupRepos();
});

const open = async (hash: string) => {
  await page.goto(new URL(hash, s.url).href);
  await page.getByTestId('link-state').filter({ hasText: 'live' }).waitFor({ timeout: 10_000 });
};

/** Waits until the page has no API GET in flight across a rendered frame (effects that start GETs have run). */
async function settled(): Promise<void> {
  for (let quiet = 0; quiet < 3; ) {
    await waitFor('the page to finish its GETs', () => inFlight === 0);
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))));
    quiet = inFlight === 0 ? quiet + 1 : 0;
  }
}

describe('the page refetches what a change names', () => {
  it('a reply seen by an open thread page costs at most one GET', async () => {
    const id = (await cli('issue', 'open', 'Counted refetches', '--body', 'first')).trim();
    await open(`#/issues/${id}`);
    await page.getByText('Counted refetches').first().waitFor({ timeout: 10_000 });
    await settled();
    gets.length = 0;
    await cli('issue', 'reply', id, '--body', 'a reply made elsewhere');
    await page.getByText('a reply made elsewhere').waitFor({ timeout: 10_000 });
    await settled();
    expect(gets, gets.join(', ')).toContain(`/api/issues/${id}`);
    expect(gets.length, gets.join(', ')).toBeLessThanOrEqual(1);
  }, 60_000);

  it('a hook event seen by an open session page costs at most two GETs, its review bundle shown and not read again', async () => {
    const id = JSON.parse(await cli('session', 'spawn', 'Counted hook', '--harness', 'shell', '--json')).id as string;
    await open(`#/sessions/${id}`);
    await page.getByTestId('session-state').filter({ hasText: 'running' }).waitFor({ timeout: 15_000 });
    // The bundle (git runs for it) reads what a hook event does not move: its branch, trunk, the readings.
    await page.getByRole('button', { name: 'Load the review bundle' }).click();
    await page.getByTestId('preflight').waitFor({ timeout: 15_000 });
    // The spawn took a worktree from the pool, which refills in the background (worktree changes the board
    // shows, not the hook's): counted from once the pool is full again.
    await waitFor('the worktree pool to refill', async () => {
      const pool = ((await (await fetch(new URL('/api/resources', s.url))).json()) as { sessions: { pool: { size: number; ready: number } } }).sessions.pool;
      return pool.ready >= pool.size;
    });
    await settled();
    gets.length = 0;
    // The hook's own route, from loopback, as an agent's HTTP hook sends it.
    const r = await fetch(new URL(`/api/sessions/${id}/signal/permission`, s.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(r.status).toBe(200);
    await page.getByTestId('session-state').filter({ hasText: 'awaiting' }).waitFor({ timeout: 10_000 });
    await settled();
    expect(gets, gets.join(', ')).toContain(`/api/sessions/${id}`);
    expect(gets, gets.join(', ')).not.toContain(`/api/sessions/${id}/review`);
    expect(gets.length, gets.join(', ')).toBeLessThanOrEqual(2);
    await cli('session', 'close', id);
  }, 60_000);
});
