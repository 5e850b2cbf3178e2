import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_CSP, dashboardResponse } from '../src/http/dashboard-assets.js';
import { screens34 as shots } from './helpers/screens-34.js';
import { screenshot, VIEWPORTS, desktopPage } from './helpers/browser.js';
import { cleanupRepos, git, ok, tempDir, testEnv } from './helpers/repo.js';
import { packageCopy, startServe, type ServeProcess } from './helpers/serve.js';
import { demoRepo } from './helpers/server.js';
import { GitHubForge } from './forge/github-forge.js';
import { trustForges } from './helpers/forge-trust.js';

const XSS = `<img src=x onerror="window.__pwned='img';alert('img')"> and <script>window.__pwned='script';alert('script')</script> and [click](javascript:alert('link'))`;

let dir: string;
let pkg: string;
let s: ServeProcess;
let browser: Browser;
let page: Page;
let seen: { dialogs: string[]; errors: string[] };
let forge: GitHubForge;

const base = () => s.url;
const open = async (hash: string) => {
  await page.goto(new URL(hash, base()).href);
  await page.getByTestId('link-state').filter({ hasText: 'live' }).waitFor({ timeout: 10_000 });
};
const badge = (node: string) => page.getByTestId(`badge-${node}`);
const cli = (...args: string[]) => ok(dir, args);
/** An issue as the API answers it (a fetch: quicker than a CLI process where the test only reads). */
const api = async (id: string) => (await fetch(new URL(`/api/issues/${encodeURIComponent(id)}`, base()))).json();
/** A fixture issue, opened through the serve's POST /api/issues (the same openIssue as `trellis issue open`): no
 * CLI process where the CLI is not what a test looks at. `rest` as the CLI's: '--node' X, '--body' Y. */
const openIssue = async (concern: string, ...rest: string[]) => {
  const opt = (name: string) => (rest.includes(name) ? rest[rest.indexOf(name) + 1] : undefined);
  const node = opt('--node');
  const body = opt('--body');
  const r = await fetch(new URL('/api/issues', s.url), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ concern, by: 'tester', ...(node ? { nodes: [node] } : {}), ...(body !== undefined ? { body } : {}) }) });
  expect(r.status).toBe(201);
  return ((await r.json()) as { id: string }).id;
};

beforeAll(async () => {
  dir = await demoRepo();
  // A linked worktree editing one node: the board marks it, the node page shows the in-flight delta.
  const wt = join(tempDir(), 'feature-wt');
  git(dir, 'worktree', 'add', '-q', '-b', 'feature/faster-pay', wt);
  writeFileSync(join(wt, 'specs/checkout/payment.md'), `${readFileSync(join(wt, 'specs/checkout/payment.md'), 'utf8')}\n## Retries\n\nA retry reuses the idempotency key.\n`);
  // A forge beside the local threads: its issues are labelled by store, its labels keep their colors.
  forge = await new GitHubForge().start();
  forge.seed({ title: 'Checkout button overlaps the footer', body: 'On small screens.\n\nSpec: checkout', labels: ['bug'], at: '2026-01-25T10:00:00Z' });
  writeFileSync(join(dir, 'trellis.json'), JSON.stringify({ specRoot: 'specs', forges: [{ driver: 'github', host: 'github.com', repo: 'acme/shop', apiUrl: forge.apiUrl }] }));
  trustForges(dir, [{ host: 'github.com', apiUrl: forge.apiUrl }]);
  pkg = packageCopy();
  s = await startServe(pkg, dir, { ...testEnv(dir), TRELLIS_HOME: join(dir, '..', 'home'), TRELLIS_DRAIN_MS: '300' });
  ({ browser, page, seen } = await desktopPage());
});

afterAll(async () => {
  await browser?.close();
  await s?.stop('SIGKILL');
  await forge?.stop().catch(() => {});
  cleanupRepos();
});

describe('trellis serve serves the dashboard', () => {
  it('answers a folder with the page (no-cache, strict CSP) and its assets (immutable); any other path, the API and /health are untouched', async () => {
    const page = await fetch(new URL('/some/where/', base()));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('cache-control')).toBe('no-cache');
    expect(page.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    // No inline script: every <script> has a src, and the CSP would refuse one anyway.
    expect(html.match(/<script\b[^>]*>/g)!.every((t) => / src="\.\/assets\/[^"]+\.js"/.test(t))).toBe(true);
    const js = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)![1]!;
    const asset = await fetch(new URL(js, base()));
    expect([asset.status, asset.headers.get('content-type'), asset.headers.get('cache-control')]).toEqual([200, 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable']);
    const missing = await fetch(new URL('/assets/nope-123.js', base()));
    expect(missing.status).toBe(404);
    // An asset name never climbs out of the assets folder.
    const climb = await fetch(new URL('/assets/..%2F..%2Fpackage.json', base()));
    expect(await climb.text()).not.toContain('"name": "trellis"');
    // Not a folder and not an asset: the API's JSON 404, never the page.
    const other = await fetch(new URL('/some/where', base()));
    expect([other.status, (await other.json()).error.code]).toEqual([404, 'NOT_FOUND']);
    const api = await fetch(new URL('/api/nope', base()));
    expect([api.status, (await api.json()).error.code]).toEqual([404, 'NOT_FOUND']);
    expect((await (await fetch(new URL('/health', base()))).json()).ok).toBe(true);
  });

  it('without a build, answers a 503 page that says to run npm run build', async () => {
    const res = await dashboardResponse(tempDir(), '/');
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('npm run build');
    expect(res.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
  });
});

describe('the dashboard in a real Chromium', () => {
  it('board: a CLI `issue open --node X` changes X’s badge on the open page, without a reload (its latency is the dashboard bench’s)', async () => {
    await open('#/board');
    await page.evaluate(() => ((window as unknown as { __sameDocument: boolean }).__sameDocument = true));
    // No zero badge: a node without open issues shows an empty slot, not a grey "0".
    await expect.poll(() => badge('checkout/shipping').textContent()).toBe('');
    // The worktree's edit is marked on its node.
    await expect.poll(() => page.locator('[data-node="checkout/payment"] .chip.worktree').textContent()).toContain('feature/faster-pay');
    await cli('issue', 'open', 'Shipping rates ignore the island surcharge', '--node', 'checkout/shipping', '--by', 'tester');
    await expect.poll(() => badge('checkout/shipping').textContent(), { timeout: 15_000, interval: 50 }).toBe('1');
    expect(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
    await screenshot(page, 'board');
  });

  it('board: search over the specs; the keyboard moves through the tree; links are deep and back/forward work', async () => {
    await open('#/board');
    const first = page.locator('.tree a[data-nav]').first();
    await first.focus();
    await page.keyboard.press('ArrowDown');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(await page.locator('.tree a[data-nav]').nth(1).textContent());
    // Snippets in plain text: the words right under a "## Matching" heading show without its hashes.
    await page.getByLabel('Search specs').fill('case-insensitive substring');
    const found = page.getByRole('status').filter({ hasText: /matching node/ });
    await found.filter({ hasText: 'case-insensitive' }).waitFor();
    const snippets = await page.locator('.list .snippet').allTextContents();
    expect(snippets.some((t) => t.includes('Matching Case-insensitive substring'))).toBe(true);
    for (const t of snippets) expect(t).not.toMatch(/(^|\s)#{1,6}\s|\*\*|\]\(/);
    for (const size of [VIEWPORTS.desktop, VIEWPORTS.phone]) {
      await page.setViewportSize(size);
      await screenshot(page, 'board-search');
    }
    await page.setViewportSize(VIEWPORTS.desktop);
    // Proper English for any count: "1 matching node", "3 matching nodes".
    await page.getByLabel('Search specs').fill('synonym');
    await found.filter({ hasText: 'synonym' }).waitFor();
    expect(await found.textContent()).toMatch(/^(1 matching node|([02-9]|\d\d+) matching nodes) for “synonym”$/);
    expect(page.url()).toContain('#/board?q=synonym');
    await page.locator('.list a[data-nav]').first().click();
    await page.getByRole('heading', { level: 1 }).waitFor();
    expect(page.url()).toContain('#/node/');
    await page.goBack();
    await expect.poll(() => page.getByLabel('Search specs').inputValue()).toBe('synonym');
    await page.goForward();
    await expect.poll(() => page.url()).toContain('#/node/');
  });

  it('node: body and parts, history with a version’s diff, its issues, the in-flight edit from the worktree', async () => {
    await open('#/node/checkout/payment');
    await page.getByTestId('node-body').waitFor();
    await page.getByText('In-flight edits').waitFor();
    await expect.poll(() => page.locator('.delta .diff').textContent()).toContain('+A retry reuses the idempotency key.');
    const version = page.locator('.timeline a').first();
    await version.click();
    await expect.poll(() => page.url()).toMatch(/#\/node\/checkout\/payment\?v=[0-9a-f]{40}/);
    await expect.poll(() => page.locator('section:has(#version-h) .diff').count()).toBe(1);
    await expect.poll(() => page.locator('section:has(#issues-h) a[data-nav]').count()).toBeGreaterThan(0);
    await screenshot(page, 'node');
  });

  it('issues: filters by status, store and node, and text; the URL keeps them', async () => {
    await open('#/issues');
    await page.locator('.issue-list li').first().waitFor();
    const all = await page.locator('.issue-list li').count();
    // "closed" in words, one choice for a local `landed` and a forge's closed; the API value stays `landed`.
    expect(await page.getByLabel('Status').locator('option').allTextContents()).not.toContain('landed');
    await page.getByLabel('Status').selectOption('closed');
    await expect.poll(() => page.locator('.issue-list li').count()).toBeLessThan(all);
    expect(page.url()).toContain('status=closed');
    expect(new Set(await page.locator('.issue-list .chip.status').allTextContents())).toEqual(new Set(['closed']));
    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Search').fill('island surcharge');
    await expect.poll(() => page.locator('.issue-list li').count()).toBe(1);
    await page.getByLabel('Search').fill('');
    await page.getByLabel('Node').fill('catalog/search');
    await page.getByLabel('Node').press('Enter');
    await expect.poll(() => page.locator('.issue-list li .title').allTextContents()).toEqual(["Search finds nothing for 'earl gray'"]);
    await page.getByLabel('Node').fill('');
    await page.getByLabel('Node').press('Enter');
    await screenshot(page, 'issues');
  });

  it('thread: a reply from the page is a commit on the thread’s ref; a remark resolved from the page is resolved for the CLI', async () => {
    const id = await openIssue('Gift wrap option missing at checkout', '--node', 'checkout');
    await cli('issue', 'remark', id, '--reading', 'checkout@1', '--body', 'Which reading of the spec applies here?', '--by', 'reviewer');
    await open(`#/issues/${id}`);
    await page.getByLabel('Reply (Markdown)').fill('Confirmed from the dashboard, see **bold**.');
    await page.getByRole('button', { name: 'Reply', exact: true }).click();
    await page.locator('[data-reply="2"]').getByText('Confirmed from the dashboard').waitFor();
    expect(git(dir, 'log', '--format=%s%n%b', `refs/trellis/issues/${id}`)).toContain('Confirmed from the dashboard, see **bold**.');

    await page.locator('[data-reply="1"]').getByRole('button', { name: 'Resolve' }).click();
    // 'unresolved' contains 'resolved': wait for the chip's own state, or the CLI could look too early.
    await expect.poll(() => page.getByTestId('remark-state-1').textContent()).toMatch(/remark · resolved/);
    const shown = JSON.parse(await cli('issue', 'show', id, '--json'));
    expect(shown.replies[0].resolved).toBe(true);
    await page.locator('[data-reply="1"]').getByRole('button', { name: 'Unresolve' }).click();
    // Polled over the serve's HTTP (GET /api/issues/:id: the same showIssue as the CLI's), then read once by the CLI.
    await expect.poll(async () => ((await (await fetch(new URL(`/api/issues/${id}`, s.url))).json()) as { replies: { resolved: boolean }[] }).replies[0]!.resolved).toBe(false);
    expect(JSON.parse(await cli('issue', 'show', id, '--json')).replies[0].resolved).toBe(false);

    // A reply retracted by the CLI turns grey on the open page, live.
    await cli('issue', 'retract', id, '2', '--by', 'human');
    await expect.poll(() => page.locator('[data-reply="2"]').getAttribute('class'), { timeout: 15_000 }).toContain('retracted');
    await screenshot(page, 'thread');
  });

  it('open: the form with its node picker opens a thread on the picked nodes', async () => {
    await open('#/new-issue?node=cart');
    await page.getByLabel('Concern (one line)').fill('Cart forgets items after sign-in');
    await page.getByLabel('Add a node').fill('accounts/sign-in');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByLabel('Add a node').fill('no/such-node');
    await page.getByRole('button', { name: 'Add', exact: true }).click();
    await page.getByRole('alert').getByText('There is no node "no/such-node"').waitFor();
    await screenshot(page, 'new-issue');
    // One rule for an unknown node (the CLI and the API refuse it too): a node left typed but not added is
    // refused on submit, never silently dropped; a near miss names the nearest nodes.
    const issuesBefore = JSON.parse(await cli('issue', 'ls', '--all', '--json')).length;
    await page.getByRole('button', { name: 'Open issue' }).click();
    await page.getByRole('alert').getByText('There is no node "no/such-node"').waitFor();
    await page.getByLabel('Add a node').fill('acounts/sign-in');
    await page.getByRole('button', { name: 'Open issue' }).click();
    await page.getByRole('alert').getByText(/^There is no node "acounts\/sign-in"; did you mean "accounts\/sign-in"(, "[^"]+")*\? Pick one from the list\.$/).waitFor();
    for (const size of [VIEWPORTS.phone, VIEWPORTS.desktop]) {
      await page.setViewportSize(size);
      await page.getByRole('alert').scrollIntoViewIfNeeded();
      await screenshot(page, 'new-issue-unknown-node');
    }
    expect(page.url()).toContain('#/new-issue');
    expect(JSON.parse(await cli('issue', 'ls', '--all', '--json')).length).toBe(issuesBefore);
    // A known node typed but not added is what the person meant: the issue names it.
    await page.getByLabel('Add a node').fill('checkout');
    await page.getByRole('button', { name: 'Open issue' }).click();
    await expect.poll(() => page.url()).toMatch(/#\/issues\/[0-9A-Z]{12}$/i);
    const id = decodeURIComponent(/#\/issues\/(.+)$/.exec(page.url())![1]!);
    const shown = JSON.parse(await cli('issue', 'show', id, '--json'));
    expect([shown.concern, shown.nodes, shown.by]).toEqual(['Cart forgets items after sign-in', ['cart', 'accounts/sign-in', 'checkout'], 'human']);
  });

  it('thread: evidence sits under the reply that carried it and is not sent twice; close and retract ask in the page; writes from the page are `human`', async () => {
    // The page of a plain serve knows nobody: its writes are `human` (spec §4.6.5), not git's user.name.
    const me = 'human';
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==', 'base64');
    const id = await openIssue('Receipt PDF is blank');
    await open(`#/issues/${id}`);
    const picker = page.locator('.reply-form input[type=file]');
    await picker.setInputFiles({ name: 'blank.png', mimeType: 'image/png', buffer: png });
    await page.getByLabel('Reply (Markdown)').fill('Screenshot attached.');
    await page.getByRole('button', { name: 'Reply', exact: true }).click();
    await page.locator('[data-reply="1"] .evidence img').waitFor();
    // The file keeps its name and type: shown, and the link downloads it under that name.
    const file = page.locator('[data-reply="1"] [data-testid="evidence-file"]');
    await expect.poll(() => file.textContent(), { timeout: 10_000 }).toMatch(/^⤓ blank\.png \(image\/png, \d+ bytes\)$/);
    expect(await file.getAttribute('download')).toBe('blank.png');
    expect(await page.locator('[data-reply="1"] .evidence img').getAttribute('alt')).toBe('blank.png');
    expect(await page.getByTestId('issue-body').locator('.evidence').count()).toBe(0);
    // The input is cleared: the next reply carries no file.
    expect(await picker.evaluate((e) => (e as HTMLInputElement).files?.length ?? 0)).toBe(0);
    await page.getByLabel('Reply (Markdown)').fill('No attachment this time.');
    await page.getByRole('button', { name: 'Reply', exact: true }).click();
    await page.locator('[data-reply="2"]').getByText('No attachment this time.').waitFor();
    expect(await page.locator('[data-reply="2"] .evidence').count()).toBe(0);
    const shown = (await api(id));
    // Which reply carried the file is the timeline read's (a reply is {by, at, body}, spec §2.1 rule 3).
    expect(shown.replies.map((r: { by: string }) => [r.by, Object.keys(r).sort().join()])).toEqual([
      [me, 'at,body,by'],
      [me, 'at,body,by'],
    ]);
    expect(Object.keys((await (await fetch(new URL(`/api/issues/${encodeURIComponent(id)}/timeline`, base()))).json()).carried)).toEqual(['1']);

    // Retract (offered on the page author's own replies) and close ask in the page, never with a browser dialog.
    await page.locator('[data-reply="2"]').getByRole('button', { name: 'Retract' }).click();
    await page.getByRole('group', { name: 'Confirm: Retract' }).getByRole('button', { name: 'Yes, retract' }).click();
    await expect.poll(() => page.locator('[data-reply="2"]').getAttribute('class')).toContain('retracted');
    await page.getByRole('button', { name: 'Close issue' }).click();
    const ask = page.getByRole('group', { name: 'Confirm: Close issue' });
    expect(await ask.textContent()).toContain('Close “Receipt PDF is blank”? It can be reopened.');
    expect((await api(id)).status).toBe('open');
    await screenshot(page, 'thread-close-asks');
    await ask.getByRole('button', { name: 'Yes, close it' }).click();
    await expect.poll(() => page.locator('.page-head .chip.status').textContent()).toBe('closed');
    expect((await api(id)).status).toBe('landed');
    expect(await page.locator('[data-event="closed"]').textContent()).toMatch(new RegExp(`^${me} closed this issue`));
    expect(seen.dialogs).toEqual([]);
    for (const size of [VIEWPORTS.desktop, VIEWPORTS.phone]) {
      await page.setViewportSize(size);
      await page.locator('[data-reply="1"]').scrollIntoViewIfNeeded();
      await screenshot(page, 'thread-evidence');
    }
    await page.setViewportSize(VIEWPORTS.desktop);
  });

  it('forge issues: labelled by store with their labels’ colors; a forge that fails a promote shows the forge’s message', async () => {
    await open('#/issues');
    const row = page.locator('.issue-list li', { hasText: 'Checkout button overlaps the footer' });
    await row.waitFor();
    expect(await row.locator('.chip.store').textContent()).toBe('github.com');
    expect(await row.locator('.chip.label', { hasText: 'bug' }).evaluate((e) => getComputedStyle(e).backgroundColor)).toBe('rgb(215, 58, 74)');
    const id = await openIssue('Promote me when the forge is sick');
    await open(`#/issues/${id}`);
    forge.mode.fail = 502;
    try {
      await page.getByRole('button', { name: 'Promote to github.com' }).click();
      const alert = page.getByRole('alert');
      await alert.waitFor();
      expect(await alert.textContent()).toMatch(/The forge refused.*Server Error/s);
    } finally {
      forge.mode.fail = undefined;
    }
    // Nothing was written locally: the thread is still open.
    expect(JSON.parse(await cli('issue', 'show', id, '--json')).status).toBe('open');
  });

  it('evidence: an image shows inline, any other file is a download', async () => {
    // A real 2×2 PNG (red), and a text log.
    const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==', 'base64');
    const ev = tempDir();
    writeFileSync(join(ev, 'shot.png'), png);
    writeFileSync(join(ev, 'log.txt'), 'GET /checkout 500\n');
    const image = JSON.parse(await cli('evidence', 'put', join(ev, 'shot.png'), '--json')).hash as string;
    const text = JSON.parse(await cli('evidence', 'put', join(ev, 'log.txt'), '--json')).hash as string;
    const id = await openIssue('Checkout 500 with a screenshot');
    await cli('issue', 'reply', id, '--body', 'Screenshot and log attached.', '--evidence', image, '--evidence', text, '--by', 'tester');
    await open(`#/issues/${id}`);
    const img = page.locator('.evidence img');
    await img.waitFor();
    await expect.poll(() => img.evaluate((e) => (e as HTMLImageElement).naturalWidth)).toBe(2);
    // Every file is offered as a download under its name (the image too); the log is one, and only the image shows inline.
    const download = page.locator(`.evidence a[download="log.txt"]`);
    await download.waitFor();
    expect(await download.getAttribute('href')).toContain(text);
    expect(await page.locator('.evidence img').count()).toBe(1);

    // Issue 34: a reply too long for one message (over the API's 1 MiB body) is refused in the page's
    // words and offered as a file; one click files the reply with the whole text as its evidence.
    const long = Array.from({ length: 40_000 }, (_, i) => `log line ${i}: checkout answered 500`).join('\n');
    await page.getByLabel('Reply (Markdown)').evaluate((el, t) => {
      (el as HTMLTextAreaElement).value = t;
      el.dispatchEvent(new Event('input', { bubbles: true }));
    }, long);
    // A file attached to the refused reply is not stored before the reply can be accepted: a refusal
    // leaves no evidence behind that nothing refers to.
    const trace = Buffer.from('trace: checkout answered 500 at 12:03\n');
    const traceHash = createHash('sha256').update(trace).digest('hex');
    const traceBlob = join(dir, '.git/trellis/evidence', traceHash.slice(0, 2), traceHash.slice(2));
    await page.locator('.reply-form input[type=file]').setInputFiles({ name: 'trace.txt', mimeType: 'text/plain', buffer: trace });
    await page.getByRole('button', { name: 'Reply', exact: true }).click();
    const tooLong = page.getByRole('alert').filter({ hasText: 'This text is too long to send as a reply.' });
    await tooLong.waitFor();
    expect(existsSync(traceBlob)).toBe(false);
    expect(await tooLong.textContent()).not.toMatch(/1048576|bytes|request bodies/);
    await shots(page, 'reply-too-long', tooLong);
    await tooLong.getByRole('button', { name: /^Attach it as a file \(1\.\d MB\)$/ }).click();
    await page.getByText(/^The full text \(1\.\d MB\) is attached as a file\.$/).waitFor();
    const shown = JSON.parse(await cli('issue', 'show', id, '--json')) as { replies: { body: string }[]; evidence: string[] };
    expect(shown.replies.at(-1)!.body).toMatch(/^The full text \(1\.\d MB\) is attached as a file\.$/);
    const added = shown.evidence.filter((h) => h !== image && h !== text);
    expect(added).toHaveLength(2);
    expect(await cli('evidence', 'get', added[0]!)).toBe(long);
    // The attached file rides the accepted reply: stored now, and referred to.
    expect(added[1]).toBe(traceHash);
    expect(existsSync(traceBlob)).toBe(true);
    expect(await page.getByLabel('Reply (Markdown)').inputValue()).toBe('');
  });

  it('XSS: an issue body and a spec node with <img onerror> and <script> render as text; nothing runs', async () => {
    const id = await openIssue('Hostile body', '--body', XSS);
    mkdirSync(join(dir, 'specs/hostile'), { recursive: true });
    writeFileSync(join(dir, 'specs/hostile/index.md'), `---\ntitle: Hostile <b>node</b>\nstatus: draft\n---\n# Hostile\n\n${XSS}\n\n## Part <script>alert(9)</script>\n\n${XSS}\n`);
    await open(`#/issues/${id}`);
    const body = page.getByTestId('issue-body');
    await body.getByText('<img src=x onerror=').waitFor();
    expect(await body.textContent()).toContain("<script>window.__pwned='script';alert('script')</script>");
    expect(await body.locator('img, script').count()).toBe(0);
    expect(await body.locator('a[href^="javascript:"]').count()).toBe(0);

    await page.goto(new URL('#/node/hostile', base()).href);
    const node = page.getByTestId('node-body');
    await node.getByText('<img src=x onerror=').first().waitFor({ timeout: 15_000 });
    expect(await node.locator('img, script').count()).toBe(0);
    expect(await page.locator('.page-head h1').textContent()).toBe('Hostile <b>node</b>');
    expect(await page.locator('h3', { hasText: 'Part <script>' }).count()).toBe(1);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: string }).__pwned)).toBeUndefined();
    expect(seen.dialogs).toEqual([]);
  });

  it('links in Markdown open without an opener or a referrer', async () => {
    const id = await openIssue('Has a link', '--body', 'See [the docs](https://example.org/docs).');
    await open(`#/issues/${id}`);
    const link = page.getByTestId('issue-body').getByRole('link', { name: 'the docs' });
    expect([await link.getAttribute('rel'), await link.getAttribute('target')]).toEqual(['noopener noreferrer', '_blank']);
  });

  it('every view at 390×844 fits the width (no sideways scroll)', async () => {
    await page.setViewportSize(VIEWPORTS.phone);
    try {
      for (const [name, hash] of [
        ['board', '#/board'],
        ['node', '#/node/checkout/payment'],
        ['issues', '#/issues'],
        ['thread', '#/issues/srch4nothing'],
        ['new-issue', '#/new-issue?node=cart'],
      ] as const) {
        await open(hash);
        await page.locator('main h1, main .tree').first().waitFor();
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
        const path = await screenshot(page, name);
        expect(statSync(path).size).toBeGreaterThan(5_000);
      }
    } finally {
      await page.setViewportSize(VIEWPORTS.desktop);
    }
  });

  it('a hot reload of the backend with the board open: the page shows it is reconnecting and is live again by itself', async () => {
    await open('#/board');
    // Record every state the live badge shows, from inside the page.
    await page.evaluate(() => {
      const w = window as unknown as { __states: string[] };
      w.__states = [];
      const el = document.querySelector('[data-testid="link-state"]')!;
      new MutationObserver(() => w.__states.push(el.textContent ?? '')).observe(el, { childList: true, characterData: true, subtree: true });
    });
    const core = join(pkg, 'dist/src/http/routes/core.js');
    writeFileSync(core, `${readFileSync(core, 'utf8')}\n// reload\n`);
    await s.line(/switched to child 2 /);
    await expect.poll(() => page.evaluate(() => (window as unknown as { __states: string[] }).__states), { timeout: 15_000, interval: 50 }).toContain('reconnecting…');
    await expect.poll(() => page.getByTestId('link-state').textContent(), { timeout: 15_000, interval: 50 }).toBe('live');
    // Live against the new child: a CLI write still reaches the page.
    const before = Number(await badge('orders/history').textContent());
    await cli('issue', 'open', 'History hides refunded orders', '--node', 'orders/history', '--by', 'tester');
    await expect.poll(() => badge('orders/history').textContent(), { timeout: 15_000, interval: 50 }).toBe(String(before + 1));
    expect(seen.errors).toEqual([]);
  });
});

