import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Served } from '../src/http/serve.js';
import { encodeProject } from '../src/store/trellis-home.js';
import { readEndpointRecord } from '../src/store/host/online-verdict.js';
import { hashPassword, readHubConfig, verifyPassword } from '../src/store/host/hub-config.js';
import { launchChromium } from './helpers/browser.js';
import { json, publishRecord, raw, standInBackend, startTestGateway, throwawayCert, type StandIn, type TestGateway } from './helpers/gateway.js';
import { BIN, cleanupRepos, ROOT, tempDir, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { startServe, type ServeProcess } from './helpers/serve.js';
import { demoRepo, serveDir } from './helpers/server.js';

/**
 * The door, hardened (issue 19): one table test per hole a hostile page or network client could use.
 * Every attack is made for real (real sockets, a real `trellis serve`, real Chromium where what a
 * browser sends on its own — cookies across ports, Origin — is the point) and must be refused.
 */

const PASSWORD = 'correct horse battery staple';
const PROJECT_PASSWORD = 'project pass 1';

const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of closers.reverse()) await c().catch(() => {});
  cleanupRepos();
});

/** One Chromium for the file, launched when a test first needs it: each test opens a context of its own, so no
 * cookie or page crosses from one test to another. */
let chromium: Promise<Browser> | undefined;
const sharedChromium = () =>
  (chromium ??= launchChromium().then((b) => {
    closers.push(() => b.close());
    return b;
  }));

async function hubHome(extra: Record<string, unknown> = {}, password = true): Promise<string> {
  const home = tempDir();
  writeFileSync(join(home, 'hub.json'), JSON.stringify({ ...(password ? { adminPassword: await hashPassword(PASSWORD) } : {}), ...extra }));
  return home;
}

async function gateway(home: string, opts: Parameters<typeof startTestGateway>[1] = {}): Promise<TestGateway> {
  const gw = await startTestGateway(home, opts);
  closers.push(() => gw.close());
  return gw;
}

async function backend(): Promise<{ dir: string; api: Served & { get: (p: string, i?: RequestInit) => Promise<Response> } }> {
  const dir = await demoRepo();
  const api = await serveDir(dir);
  closers.push(() => api.close());
  return { dir, api };
}

async function standIn(home: string): Promise<{ root: string; b: StandIn }> {
  const root = tempRepo();
  const b = await standInBackend(root);
  closers.push(() => b.close());
  await publishRecord(home, root, b.url, b.instanceId);
  return { root, b };
}

const login = (gw: TestGateway, password: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}, ca?: string) =>
  raw(new URL('/auth/login', gw.url).href, { method: 'POST', body: JSON.stringify({ password, ...extra }), headers, ...(ca ? { ca } : {}) });
/** A serve's stop gives idle keep-alive sockets min(1 s, TRELLIS_DRAIN_MS): nothing here is about the drain. */
const QUICK_DRAIN = { TRELLIS_DRAIN_MS: '300' };
const cookieOf = (r: { headers: { 'set-cookie'?: string[] } }) => r.headers['set-cookie']?.[0]?.split(';')[0];
const originOf = (url: string) => new URL(url).origin;

/** The status a WebSocket upgrade gets (101 when it opened). */
function upgradeStatus(url: string, headers: Record<string, string> = {}, ca?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url.replace(/^http/, 'ws'), { headers, ...(ca ? { ca } : {}) });
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

/** PUT /hub/icon (an admin mutation) with the ETag a GET just gave. */
async function putIcon(base: string, headers: Record<string, string>, ca?: string) {
  const url = new URL('/hub/icon', base).href;
  const etag = (await raw(url, { headers, ...(ca ? { ca } : {}) })).headers.etag;
  return raw(url, { method: 'PUT', headers: { ...headers, 'If-Match': String(etag) }, body: '{"icon":"x"}', ...(ca ? { ca } : {}) });
}

/** A server on another loopback port: any local dev server, or a page such a server was made to serve. */
async function otherSite(html = '<!doctype html><title>another site</title><p>hello'): Promise<string> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(html);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => (server.close(r), server.closeAllConnections())));
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}/`;
}

/** Runs `trellis <args>` until it exits or `ms` pass (then it is killed: a serve that should have refused). */
function runBounded(cwd: string, args: string[], env: NodeJS.ProcessEnv, ms: number): Promise<{ code: number | null; killed: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let killed = false;
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => ((killed = true), child.kill('SIGTERM')), ms);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, killed, stdout, stderr });
    });
  });
}

/** A non-loopback IPv4 address of this machine, where a network client would connect. */
const lanAddress = (): string | undefined =>
  Object.values(networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

describe('row 1: a non-loopback `serve --host` needs a password and is gated like --public', () => {
  const project = () => {
    const root = tempRepo();
    writeFileSync(join(root, 'trellis.json'), '{}\n');
    const home = join(tempDir(), 'home');
    mkdirSync(home, { recursive: true });
    return { root, home };
  };

  it('without an admin password it refuses to start, naming the repair', async () => {
    const { root, home } = project();
    const r = await runBounded(root, ['serve', '--host', '0.0.0.0', '--port', '0'], { ...testEnv(root), TRELLIS_HOME: home }, 15_000);
    expect(r.killed, `it served instead of refusing: ${r.stdout}`).toBe(false);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('0.0.0.0');
    expect(r.stderr).toContain("trellis dashboard password");
  }, 30_000);

  it('with one, the network port is the gateway (login first); the raw API stays on loopback; it prints the URLs it serves', async () => {
    const { root, home } = project();
    const lan = lanAddress() ?? '127.0.0.1';
    writeFileSync(join(home, 'hub.json'), JSON.stringify({ adminPassword: await hashPassword(PASSWORD), allowedHosts: [lan] }));
    const s: ServeProcess = await startServe(ROOT, root, { ...testEnv(root), TRELLIS_HOME: home, ...QUICK_DRAIN }, ['--host', '0.0.0.0', '--port', '0']);
    closers.push(() => s.stop('SIGTERM'));
    const line = await s.line(/public gateway for /);
    const printed = [...line.matchAll(/(https?:\/\/\S+?)(?=[\s,;)]|$)/g)].map((m) => m[1]!);
    const pub = printed.find((u) => new URL(u).hostname === lan);
    expect(pub, `no URL at ${lan} in: ${line}`).toBeDefined();
    expect(printed.some((u) => new URL(u).hostname === '0.0.0.0' || new URL(u).port === '0')).toBe(false);
    const port = Number(new URL(pub!).port);
    const slot = encodeProject(root);

    // The network port answers nothing of the project without a login: no raw API there.
    const direct = await raw(`http://${lan}:${port}/api/instance`);
    expect(direct.status).not.toBe(200);
    expect(direct.body).not.toContain(root);
    expect((await raw(`http://${lan}:${port}/p/${slot}/api/instance`)).status).toBe(401);
    const cookie = cookieOf(await raw(`http://${lan}:${port}/auth/login`, { method: 'POST', body: JSON.stringify({ password: PASSWORD }) }));
    expect(cookie).toBeDefined();
    const through = await raw(`http://${lan}:${port}/p/${slot}/api/instance`, { headers: { Cookie: cookie! } });
    expect(through.status).toBe(200);
    expect(json(through).root).toBe(root);

    // The backend's own port (the endpoint record's) listens on loopback only.
    const record = await readEndpointRecord(home, root);
    expect(record.online).toBe(true);
    const backendPort = Number(new URL(record.online ? record.record.url : '').port);
    expect(backendPort).not.toBe(port);
    if (lan !== '127.0.0.1') expect(await connects(lan, backendPort)).toBe(false);
    expect(await s.stop('SIGTERM')).toBe(0);
  }, 60_000);
});

describe('row 2: origins are compared whole (scheme, host and port)', () => {
  let home: string;
  let gw: TestGateway;
  let be: Awaited<ReturnType<typeof backend>>;
  let echo: { root: string; b: StandIn };
  let admin: string;
  beforeAll(async () => {
    home = await hubHome();
    be = await backend();
    await publishRecord(home, be.dir, be.api.url, be.api.instanceId);
    echo = await standIn(home);
    gw = await gateway(home);
    admin = cookieOf(await login(gw, PASSWORD))!;
  });
  const at = (p: string) => new URL(p, gw.url).href;
  const issueCount = async () => ((await (await be.api.get('/api/issues')).json()) as { issues: unknown[] }).issues.length;

  it('gateway: another loopback port with the login cookie may not register a project or open a pane socket', async () => {
    const evil = `http://127.0.0.1:${gw.port + 1 === 65536 ? 1 : gw.port + 1}`;
    for (const origin of [evil, 'http://localhost:9', 'https://127.0.0.1:' + gw.port]) {
      const post = await raw(at('/projects'), { method: 'POST', headers: { Origin: origin, Cookie: admin }, body: JSON.stringify({ path: tempRepo() }) });
      expect(post.status, origin).toBe(403);
      expect(json(post).error.code).toBe('FORBIDDEN');
      expect(await upgradeStatus(at(`/p/${encodeProject(echo.root)}/ws`), { Origin: origin, Cookie: admin }), origin).toBe(403);
    }
  });

  it('backend: a page on another loopback port may not write or open a pane socket', async () => {
    const port = Number(new URL(be.api.url).port);
    const before = await issueCount();
    for (const origin of [`http://127.0.0.1:${port === 65535 ? 1 : port + 1}`, `http://localhost:${port + 2}`, `https://127.0.0.1:${port}`]) {
      const r = await be.api.get('/api/issues', { method: 'POST', headers: { 'content-type': 'text/plain', origin }, body: JSON.stringify({ concern: 'forged from another port', by: 'evil' }) });
      expect(r.status, origin).toBe(403);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN');
      expect(await upgradeStatus(new URL('/api/sessions/nosuchsession/socket', be.api.url).href, { Origin: origin }), origin).toBe(403);
    }
    expect(await issueCount()).toBe(before);
  });

  it('same-origin stays open: the backend own page, the gateway own page, and through /p to a real backend', async () => {
    const before = await issueCount();
    const own = await be.api.get('/api/issues', { method: 'POST', headers: { 'content-type': 'application/json', origin: originOf(be.api.url) }, body: JSON.stringify({ concern: 'from its own page', by: 'me' }) });
    expect(own.status).toBe(201);
    // The backend's own socket route gets past the origin rule (to its 404 for an unknown session).
    expect(await upgradeStatus(new URL('/api/sessions/nosuchsession/socket', be.api.url).href, { Origin: originOf(be.api.url) })).toBe(404);
    const proxied = await raw(at(`/p/${encodeProject(be.dir)}/api/issues`), { method: 'POST', headers: { Origin: originOf(gw.url), Cookie: admin }, body: JSON.stringify({ concern: 'through the gateway', by: 'me' }) });
    expect(proxied.status).toBe(201);
    expect(await upgradeStatus(at(`/p/${encodeProject(echo.root)}/ws`), { Origin: originOf(gw.url), Cookie: admin })).toBe(101);
    expect(await issueCount()).toBe(before + 2);
    // A CLI (no Origin) is judged by authentication alone.
    expect((await putIcon(gw.url, { Cookie: admin })).status).toBe(200);
  });

  it('under TLS the origin is https on the same port: the gateway own https page writes, an http one does not', async () => {
    const cert = rsaCert();
    const h = await hubHome();
    const tgw = await gateway(h, { tls: cert });
    const cookie = cookieOf(await login(tgw, PASSWORD, {}, {}, cert.cert))!;
    const origin = originOf(tgw.url);
    expect(origin).toMatch(/^https:/);
    const put = (o: string) => putIcon(tgw.url, { Origin: o, Cookie: cookie }, cert.cert);
    expect((await put(origin.replace(/^https/, 'http'))).status).toBe(403);
    expect((await put(origin)).status).toBe(200);
  });

  it('serve --public with hub.json tls: the public face speaks https, and its own https pages write through /p', async () => {
    const dir = await demoRepo();
    const h = tempDir();
    const cert = throwawayCert();
    writeFileSync(join(h, 'cert.pem'), cert.cert);
    writeFileSync(join(h, 'key.pem'), cert.key);
    writeFileSync(join(h, 'hub.json'), JSON.stringify({ adminPassword: await hashPassword(PASSWORD), tls: { cert: join(h, 'cert.pem'), key: join(h, 'key.pem') } }));
    const s = await startServe(ROOT, dir, { ...testEnv(dir), TRELLIS_HOME: h, ...QUICK_DRAIN }, ['--public', '--port', '0']);
    closers.push(() => s.stop('SIGTERM'));
    const line = await s.line(/public gateway for /);
    const page = /at (https:\/\/\S+?\/p\/\S+?\/)/.exec(line)?.[1];
    expect(page, line).toBeDefined();
    const origin = originOf(page!);
    const r = await raw(new URL('/auth/login', origin).href, { method: 'POST', body: JSON.stringify({ password: PASSWORD }), ca: cert.cert });
    const cookie = cookieOf(r)!;
    expect(cookie).toMatch(/^__Host-trellis_session=/);
    const write = (o: string) => raw(new URL('api/issues', page).href, { method: 'POST', headers: { Origin: o, Cookie: cookie }, body: JSON.stringify({ concern: 'through the public face', by: 'me' }), ca: cert.cert });
    expect((await write(origin.replace(/^https/, 'http'))).status).toBe(403);
    expect((await write(origin)).status).toBe(201);
  }, 60_000);

  describe('in Chromium: a page served from another loopback port', () => {
    let browser: Browser;
    let page: Page;
    beforeAll(async () => {
      browser = await sharedChromium();
      const context = await browser.newContext();
      page = await context.newPage();
      // The person logs in on the gateway's own page: the browser now holds the session cookie.
      await page.goto(gw.url);
      const status = await page.evaluate(async (password) => (await fetch('/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password }) })).status, PASSWORD);
      expect(status).toBe(200);
    }, 60_000);

    it('cannot register a project, open a pane socket through /p, or write to a backend, with the browser own cookie', async () => {
      const target = tempRepo();
      writeFileSync(join(target, 'trellis.json'), '{}\n');
      const before = await issueCount();
      await page.goto(await otherSite());
      const wsUrl = `ws://127.0.0.1:${gw.port}/p/${encodeProject(echo.root)}/ws`;
      const outcome = await page.evaluate(
        async ({ gwUrl, path, wsUrl, backendUrl }) => {
          // text/plain needs no preflight: the browser sends it cross-origin, cookie included (same site).
          await fetch(`${gwUrl}projects`, { method: 'POST', mode: 'no-cors', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ path }) }).catch(() => {});
          await fetch(`${backendUrl}api/issues`, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: JSON.stringify({ concern: 'forged by a page on another port', by: 'evil' }) }).catch(() => {});
          const ws = await new Promise<string>((resolve) => {
            const s = new window.WebSocket(wsUrl);
            s.onopen = () => (s.close(), resolve('open'));
            s.onerror = () => resolve('refused');
          });
          return { ws };
        },
        { gwUrl: gw.url, path: target, wsUrl, backendUrl: be.api.url },
      );
      expect(outcome.ws).toBe('refused');
      const catalog = (() => {
        try {
          return readFileSync(join(home, 'projects.json'), 'utf8');
        } catch {
          return '';
        }
      })();
      expect(catalog).not.toContain(target);
      expect(await issueCount()).toBe(before);
      // The gateway's own page, same cookie, still opens the socket.
      await page.goto(gw.url);
      expect(
        await page.evaluate(
          (u) =>
            new Promise<string>((resolve) => {
              const s = new window.WebSocket(u);
              s.onopen = () => (s.close(), resolve('open'));
              s.onerror = () => resolve('refused');
            }),
          wsUrl,
        ),
      ).toBe('open');
    }, 60_000);
  });
});

describe('row 3: the login rate limit holds against parallel guesses, per address and per scope', () => {
  it('100 parallel wrong passwords: at most 5 are checked, the rest get 429 with Retry-After', async () => {
    const gw = await gateway(await hubHome());
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => login(gw, `wrong ${i}`)));
    const checked = answers.filter((r) => r.status === 401).length;
    const limited = answers.filter((r) => r.status === 429);
    expect(checked).toBeLessThanOrEqual(5);
    expect(checked + limited.length).toBe(100);
    for (const r of limited) expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    expect((await login(gw, PASSWORD)).status).toBe(429);
  }, 60_000);

  it('a project-password login never resets the admin failure count; admin failures never lock the project gate', async () => {
    const pwRoot = tempRepo();
    const gw = await gateway(await hubHome({ gates: { [encodeProject(pwRoot)]: { password: await hashPassword(PROJECT_PASSWORD) } } }));
    for (let i = 0; i < 4; i++) expect((await login(gw, `wrong ${i}`)).status).toBe(401);
    expect((await login(gw, PROJECT_PASSWORD, { project: encodeProject(pwRoot) })).status).toBe(200);
    expect((await login(gw, 'wrong 4')).status).toBe(401);
    // Five admin failures in the window: the admin scope is closed, even to the right password.
    const r = await login(gw, PASSWORD);
    expect(r.status).toBe(429);
    expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    // The project's own gate keeps its own count.
    expect((await login(gw, PROJECT_PASSWORD, { project: encodeProject(pwRoot) })).status).toBe(200);
  }, 60_000);
});

describe('row 4: the login session id is fresh at every login (no fixation)', () => {
  it('a session id planted before the admin login is never promoted, and is revoked', async () => {
    const pwRoot = tempRepo();
    const gw = await gateway(await hubHome({ gates: { [encodeProject(pwRoot)]: { password: await hashPassword(PROJECT_PASSWORD) } } }));
    const at = (p: string) => new URL(p, gw.url).href;
    // The attacker's own, lesser login: a project password.
    const planted = cookieOf(await login(gw, PROJECT_PASSWORD, { project: encodeProject(pwRoot) }))!;
    expect((await raw(at('/projects'), { headers: { Cookie: planted } })).status).toBe(403);
    // The person logs in as admin carrying the planted cookie.
    const r = await login(gw, PASSWORD, {}, { Cookie: planted });
    expect(r.status).toBe(200);
    const fresh = cookieOf(r);
    expect(fresh).toBeDefined();
    expect(fresh).not.toBe(planted);
    expect((await raw(at('/projects'), { headers: { Cookie: fresh! } })).status).toBe(200);
    // The planted id opens nothing any more: not admin, not even its old project.
    expect((await raw(at('/projects'), { headers: { Cookie: planted } })).status).toBe(401);
    expect(json(await raw(at('/auth/status'), { headers: { Cookie: planted } }))).toMatchObject({ loggedIn: false, admin: false });
    // The new session keeps what the browser had already opened (a second gate login adds to it).
    expect(json(await raw(at('/auth/status'), { headers: { Cookie: fresh! } })).projects).toEqual([encodeProject(pwRoot)]);
  });

  it('in Chromium: a cookie planted by a page on another loopback port (cookies ignore ports) is not promoted by the login', async () => {
    const pwRoot = tempRepo();
    const gw = await gateway(await hubHome({ gates: { [encodeProject(pwRoot)]: { password: await hashPassword(PROJECT_PASSWORD) } } }));
    const at = (p: string) => new URL(p, gw.url).href;
    const planted = cookieOf(await login(gw, PROJECT_PASSWORD, { project: encodeProject(pwRoot) }))!;
    const browser = await sharedChromium();
    const page = await (await browser.newContext()).newPage();
    await page.goto(await otherSite());
    await page.evaluate((c) => (document.cookie = `${c}; path=/`), planted);
    await page.goto(gw.url);
    const status = await page.evaluate(async (password) => (await fetch('/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password }) })).status, PASSWORD);
    expect(status).toBe(200);
    expect(await page.evaluate(async () => (await fetch('/projects')).status)).toBe(200);
    expect((await raw(at('/projects'), { headers: { Cookie: planted } })).status).toBe(401);
  }, 60_000);
});

describe('row 5: the backend answers loopback Host names only (DNS rebinding)', () => {
  let be: Awaited<ReturnType<typeof backend>>;
  beforeAll(async () => {
    be = await backend();
  });

  it('a rebinding Host gets 403 with a JSON error on reads, the page, writes and sockets', async () => {
    const port = new URL(be.api.url).port;
    for (const host of [`attacker.example:${port}`, `127.0.0.1.attacker.example:${port}`, 'attacker.example']) {
      for (const path of ['/api/issues', '/api/graph', '/api/sessions/x/capture', '/', '/api/instance']) {
        const r = await raw(new URL(path, be.api.url).href, { headers: { Host: host } });
        expect(r.status, `${host} ${path}`).toBe(403);
        expect(json(r).error.code).toBe('FORBIDDEN');
      }
      const post = await raw(new URL('/api/issues', be.api.url).href, { method: 'POST', headers: { Host: host }, body: JSON.stringify({ concern: 'x', by: 'y' }) });
      expect(post.status).toBe(403);
      expect(await upgradeStatus(new URL('/api/sessions/x/socket', be.api.url).href, { Host: host })).toBe(403);
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `app.localhost:${port}`]) {
      expect((await raw(new URL('/api/issues', be.api.url).href, { headers: { Host: host } })).status, host).toBe(200);
    }
  });

  it('the same through `trellis serve` (supervisor and child)', async () => {
    const dir = await demoRepo();
    const home = tempDir();
    const s = await startServe(ROOT, dir, { ...testEnv(dir), TRELLIS_HOME: home, ...QUICK_DRAIN });
    closers.push(() => s.stop('SIGTERM'));
    const r = await raw(new URL('/api/issues', s.url).href, { headers: { Host: 'attacker.example' } });
    expect(r.status).toBe(403);
    expect(json(r).error.code).toBe('FORBIDDEN');
    expect((await raw(new URL('/api/issues', s.url).href)).status).toBe(200);
  }, 60_000);
});

describe('row 11: `trellis dashboard password` from a pipe', () => {
  const set = (input: string) => {
    const home = tempDir();
    const cwd = tempDir();
    return { home, run: trellis(cwd, ['dashboard', 'password'], { input, env: { TRELLIS_HOME: home } }) };
  };

  it('takes the first line only', async () => {
    const { home, run } = set('first line pw\nsecond line\n');
    const r = await run;
    expect(r.code, r.stderr).toBe(0);
    const hash = readHubConfig(home).adminPassword!;
    expect(await verifyPassword('first line pw', hash)).toBe(true);
    const crlf = set('windows line pw\r\nmore\r\n');
    expect((await crlf.run).code).toBe(0);
    expect(await verifyPassword('windows line pw', readHubConfig(crlf.home).adminPassword!)).toBe(true);
  });

  it.each([
    ['an empty password', '\n', 'empty'],
    ['nothing at all', '', 'empty'],
    ['a tab', 'tab\tinside pw\n', 'control character'],
    ['an escape', 'esc\u001b[31m pw\n', 'control character'],
  ])('refuses %s with a clear message, storing nothing', async (_what, input, says) => {
    const { home, run } = set(input);
    const r = await run;
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(says);
    expect(readHubConfig(home).adminPassword).toBeUndefined();
  });
});

/** A throwaway RSA certificate: with one, a server could also offer the suites without forward secrecy. */
function rsaCert(): { cert: string; key: string } {
  const dir = tempDir();
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
}

/** The suite a TLS handshake settled on, or null when the server refused it. */
function handshake(port: number, opts: tls.ConnectionOptions): Promise<{ name: string; version: string } | null> {
  return new Promise((resolve) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...opts });
    s.once('secureConnect', () => {
      const c = s.getCipher();
      s.destroy();
      resolve({ name: c.name, version: c.version });
    });
    s.once('error', () => resolve(null));
  });
}

describe('row 12: TLS offers forward-secret AEAD suites only; HSTS only over TLS', () => {
  let tgw: TestGateway;
  beforeAll(async () => {
    tgw = await gateway(await hubHome(), { tls: rsaCert() });
  });

  it.each(['AES128-GCM-SHA256', 'AES256-GCM-SHA384', 'AES128-SHA', 'AES256-SHA256', 'ECDHE-RSA-AES128-SHA', 'ECDHE-RSA-AES256-SHA384', 'DHE-RSA-AES128-SHA'])('TLS 1.2 %s is refused', async (cipher) => {
    expect(await handshake(tgw.port, { maxVersion: 'TLSv1.2', ciphers: `${cipher}:@SECLEVEL=0` })).toBeNull();
  });

  it('TLS 1.0 and 1.1 are refused', async () => {
    expect(await handshake(tgw.port, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT:@SECLEVEL=0' })).toBeNull();
  });

  it.each(['ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-RSA-CHACHA20-POLY1305'])('TLS 1.2 %s is served', async (cipher) => {
    expect(await handshake(tgw.port, { maxVersion: 'TLSv1.2', ciphers: cipher })).toMatchObject({ name: cipher, version: 'TLSv1.2' });
  });

  it('TLS 1.3 is served', async () => {
    expect((await handshake(tgw.port, { minVersion: 'TLSv1.3' }))?.version).toBe('TLSv1.3');
  });

  it('HSTS (includeSubDomains) on https responses; never on plain http, gateway or backend', async () => {
    const cert = rsaCert();
    const h = await hubHome();
    const t = await gateway(h, { tls: cert });
    const secure = await raw(new URL('/auth/status', t.url).href, { ca: cert.cert });
    expect(secure.headers['strict-transport-security']).toMatch(/max-age=\d+; includeSubDomains/);
    const plain = await gateway(await hubHome());
    for (const path of ['/auth/status', '/']) expect((await raw(new URL(path, plain.url).href)).headers['strict-transport-security'], path).toBeUndefined();
    const be = await backend();
    for (const path of ['/api/issues', '/']) expect((await raw(new URL(path, be.api.url).href)).headers['strict-transport-security'], path).toBeUndefined();
  });
});
