import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openProject } from '../src/store/compose/open-project.js';
import { hashPassword } from '../src/store/host/hub-config.js';
import { encodeProject } from '../src/store/trellis-home.js';
import { serveProject } from '../src/http/serve.js';
import { GitHubForge } from './forge/github-forge.js';
import { trustForges } from './helpers/forge-trust.js';
import { jsonRequest, loginCookie, publishRecord, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { cleanupRepos, tempDir, tempRepo, testEnv } from './helpers/repo.js';

/*
 * Issue 46, deliverable 5 (the owner scope: "every forge write that uses the host's credentials"). The
 * probe found a project login making forge writes with the host's forge token: POST /api/issues with a
 * forge store, and reply/close on a forge issue, were `data` rows whatever the issue's store. Each row
 * here is a real request through a real gateway to a real backend whose forge is a GitHub stand-in; a
 * refused forge write must reach no forge at all. Against the code before the fix, the project login's
 * open, reply and close made their writes on the stand-in (201/200), and edit/reopen reached the backend.
 */

const ADMIN = 'correct horse battery staple';
const DATA_PW = 'data only password';

let dir: string;
let home: string;
let gwHome: string;
let id: string;
let forge: GitHubForge;
let served: Awaited<ReturnType<typeof serveProject>>;
let gw: TestGateway;
let savedHome: string | undefined;
const cookie = { data: '', admin: '' };

const request = jsonRequest;
const login = (password: string, project?: string): Promise<string> => loginCookie(gw.url, password, project);

/** What the stand-in was asked to change: every request but a read. */
const writesOnForge = () => forge.log.filter((l) => l.method !== 'GET' && l.method !== 'HEAD');

beforeAll(async () => {
  forge = await new GitHubForge().start();
  forge.seed({ title: 'Checkout button overlaps the footer', body: 'On small screens.' });
  forge.seed({ title: 'A second forge issue', body: 'To close.' });
  dir = tempRepo();
  writeFileSync(join(dir, 'trellis.json'), JSON.stringify({ forges: [{ driver: 'github', host: 'github.com', repo: 'acme/shop', apiUrl: forge.apiUrl }] }));
  trustForges(dir, [{ host: 'github.com', apiUrl: forge.apiUrl }]);
  home = testEnv(dir).TRELLIS_HOME!;
  savedHome = process.env.TRELLIS_HOME;
  process.env.TRELLIS_HOME = home;
  mkdirSync(home, { recursive: true });
  served = await serveProject(openProject(dir), { port: 0 });
  await served.live.project.forges.refresh();
  const instance = (await request(served.url, '/api/instance')).body as { instanceId: string };
  gwHome = tempDir();
  id = encodeProject(dir);
  await publishRecord(gwHome, dir, served.url, instance.instanceId);
  writeFileSync(join(gwHome, 'hub.json'), JSON.stringify({ adminPassword: await hashPassword(ADMIN), owner: 'Ada Owner', gates: { [id]: { password: await hashPassword(DATA_PW), name: 'Bea Viewer' } } }));
  gw = await startTestGateway(gwHome);
  cookie.data = await login(DATA_PW, id);
  cookie.admin = await login(ADMIN);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await served?.close();
  await forge?.stop().catch(() => {});
  if (savedHome === undefined) delete process.env.TRELLIS_HOME;
  else process.env.TRELLIS_HOME = savedHome;
  cleanupRepos();
});

const through = () => new URL(`/p/${id}/`, gw.url).href;
const enc = encodeURIComponent;

describe('a project login (scope data) makes no forge write with the host’s token', () => {
  const writes: { name: string; path: string; body: unknown }[] = [
    { name: 'opening an issue with a forge store', path: 'api/issues', body: { concern: 'filed on GitHub by a viewer', store: 'github.com' } },
    { name: 'replying to a forge issue', path: `api/issues/${enc('github.com#1')}/reply`, body: { body: 'me too' } },
    { name: 'closing a forge issue', path: `api/issues/${enc('github.com#1')}/close`, body: {} },
    { name: 'editing a forge issue', path: `api/issues/${enc('github.com#1')}/edit`, body: { concern: 'renamed' } },
    { name: 'reopening a forge issue', path: `api/issues/${enc('github.com#1')}/reopen`, body: {} },
  ];
  it.each(writes)('$name → 403 with words that say why, and the forge gets no request', async ({ path, body }) => {
    const before = writesOnForge().length;
    const r = await request(through(), path, { body, headers: { cookie: cookie.data } });
    expect(r.status).toBe(403);
    expect(r.body.error.code).toBe('FORBIDDEN');
    expect(r.body.error.message).toMatch(/github\.com.*this machine's token.*the owner/);
    expect(writesOnForge().length).toBe(before);
    expect(forge.issues[0]!.state).toBe('open');
  });

  it('a forged scope stamp from the client is dropped: still 403', async () => {
    const before = writesOnForge().length;
    const r = await request(through(), `api/issues/${enc('github.com#1')}/reply`, { body: { body: 'me too' }, headers: { cookie: cookie.data, 'trellis-door-scope': 'owner' } });
    expect(r.status).toBe(403);
    expect(writesOnForge().length).toBe(before);
  });

  it('the same login reads, opens, replies to, edits, closes and reopens a local issue', async () => {
    const headers = { cookie: cookie.data };
    const opened = await request(through(), 'api/issues', { body: { concern: 'a local concern' }, headers });
    expect([opened.status, opened.body.store]).toEqual([201, 'local']);
    const localId = enc(opened.body.id);
    const explicit = await request(through(), 'api/issues', { body: { concern: 'local, named', store: 'local' }, headers });
    expect(explicit.status).toBe(201);
    expect((await request(through(), `api/issues/${localId}/reply`, { body: { body: 'a reply' }, headers })).status).toBe(200);
    expect((await request(through(), `api/issues/${localId}/edit`, { body: { concern: 'a local concern, edited' }, headers })).status).toBe(200);
    expect((await request(through(), `api/issues/${localId}/close`, { body: {}, headers })).status).toBe(200);
    const reopened = await request(through(), `api/issues/${localId}/reopen`, { body: {}, headers });
    expect([reopened.status, reopened.body.status, reopened.body.by]).toEqual([200, 'open', 'Bea Viewer']);
    expect((await request(through(), `api/issues/${enc('github.com#1')}`, { headers })).status).toBe(200);
  });

  it('GET /auth/status lists the forge writes only for a login that may make them', async () => {
    const routes = async (c: string) => (await request(gw.url, `/auth/status?project=${id}`, { headers: { cookie: c } })).body.routes as string[];
    const forgeKeys = ['POST /api/issues (forge)', 'POST /api/issues/:id/reply (forge)', 'POST /api/issues/:id/close (forge)'];
    const data = await routes(cookie.data);
    expect(data).toContain('POST /api/issues/:id/reply');
    for (const k of forgeKeys) expect(data).not.toContain(k);
    const admin = await routes(cookie.admin);
    for (const k of forgeKeys) expect(admin).toContain(k);
  });
});

describe('the owner writes to the forge', () => {
  it('the admin login opens, replies to and closes forge issues: the stand-in gets each write', async () => {
    const headers = { cookie: cookie.admin };
    const before = writesOnForge().length;
    const opened = await request(through(), 'api/issues', { body: { concern: 'filed on GitHub by the owner', store: 'github.com' }, headers });
    expect([opened.status, opened.body.store]).toEqual([201, 'github.com']);
    expect((await request(through(), `api/issues/${enc('github.com#1')}/reply`, { body: { body: 'confirmed' }, headers })).status).toBe(200);
    expect((await request(through(), `api/issues/${enc('github.com#2')}/close`, { body: {}, headers })).status).toBe(200);
    expect(writesOnForge().length).toBeGreaterThanOrEqual(before + 3);
    expect(forge.issues[1]!.state).toBe('closed');
  });

  it('direct on loopback (the person at the machine, no door) is the owner: a forge reply is made', async () => {
    const before = writesOnForge().length;
    const r = await request(served.url, `/api/issues/${enc('github.com#1')}/reply`, { body: { body: 'from the machine' } });
    expect(r.status).toBe(200);
    expect(writesOnForge().length).toBeGreaterThan(before);
  });
});

describe('the page offers a forge write only to a login that may make it', () => {
  it('a project login: a forge issue shows why it cannot reply or close, and no forge store to open in; the admin gets the form', async () => {
    const { launchChromium } = await import('./helpers/browser.js');
    const browser = await launchChromium();
    try {
      const page = async (password: string, project?: string) => {
        const ctx = await browser.newContext();
        const p = await ctx.newPage();
        expect((await p.request.post(new URL('/auth/login', gw.url).href, { data: { password, ...(project ? { project } : {}) } })).status()).toBe(200);
        return p;
      };
      const viewer = await page(DATA_PW, id);
      await viewer.goto(`${through()}#/issues/${enc('github.com#1')}`);
      await viewer.getByTestId('forge-owner-needed').waitFor({ timeout: 15_000 });
      expect(await viewer.getByRole('button', { name: 'Close issue' }).count()).toBe(0);
      expect(await viewer.getByText('Reply (Markdown)').count()).toBe(0);
      await viewer.goto(`${through()}#/new-issue`);
      await viewer.getByRole('button', { name: 'Open issue' }).waitFor({ timeout: 15_000 });
      await expect.poll(() => viewer.locator('select option').allTextContents()).toEqual(['local (this repository)']);

      const owner = await page(ADMIN);
      await owner.goto(`${through()}#/issues/${enc('github.com#1')}`);
      await owner.getByText('Reply (Markdown)').waitFor({ timeout: 15_000 });
      expect(await owner.getByRole('button', { name: 'Close issue' }).count()).toBe(1);
      expect(await owner.getByTestId('forge-owner-needed').count()).toBe(0);
      await owner.goto(`${through()}#/new-issue`);
      await expect.poll(() => owner.locator('select option').allTextContents(), { timeout: 15_000 }).toEqual(['local (this repository)', 'github.com']);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
