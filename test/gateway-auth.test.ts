import { readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { encodeProject } from '../src/store/trellis-home.js';
import { hashPassword, readHubConfig, verifyPassword } from '../src/store/host/hub-config.js';
import { json, publishRecord, raw, standInBackend, startTestGateway, throwawayCert, type StandIn, type TestGateway } from './helpers/gateway.js';
import { cleanupRepos, tempDir, tempRepo, trellis } from './helpers/repo.js';
import { waitFor } from './helpers/wait.js';

afterAll(cleanupRepos);

const PASSWORD = 'correct horse battery staple';

interface Setup {
  home: string;
  gw: TestGateway;
  backend: StandIn;
  root: string;
  at: (p: string) => string;
}
const made: Setup[] = [];
afterAll(async () => {
  for (const s of made) {
    await s.gw.close();
    await s.backend.close();
  }
});

async function setup(opts: { password?: boolean; gates?: Record<string, unknown>; tls?: { cert: string; key: string } } = {}): Promise<Setup> {
  const home = tempDir();
  const root = tempRepo();
  if (opts.password || opts.gates) {
    writeFileSync(join(home, 'hub.json'), JSON.stringify({ ...(opts.password ? { adminPassword: await hashPassword(PASSWORD) } : {}), ...(opts.gates ? { gates: opts.gates } : {}) }));
  }
  const backend = await standInBackend(root);
  await publishRecord(home, root, backend.url, backend.instanceId);
  const gw = await startTestGateway(home, opts.tls ? { tls: opts.tls } : {});
  const s = { home, gw, backend, root, at: (p: string) => new URL(p, gw.url).href };
  made.push(s);
  return s;
}

const login = (s: Setup, password: string, extra: Record<string, unknown> = {}, ca?: string) =>
  raw(s.at('/auth/login'), { method: 'POST', body: JSON.stringify({ password, ...extra }), ...(ca ? { ca } : {}) });
const cookieOf = (r: { headers: { 'set-cookie'?: string[] } }) => r.headers['set-cookie']![0]!.split(';')[0]!;

describe('auth table', () => {
  let open: Setup;
  let locked: Setup;
  beforeAll(async () => {
    open = await setup();
    locked = await setup({ password: true });
  });

  it('no password + loopback client → admin, and /p is reachable', async () => {
    expect((await raw(open.at('/projects'))).status).toBe(200);
    expect(json(await raw(open.at('/auth/status')))).toMatchObject({ passwordSet: false, admin: true });
    expect((await raw(open.at(`/p/${encodeProject(open.root)}/api/x`))).status).toBe(200);
  });

  it('password set + no cookie → 401 on admin routes and on a gated /p, before the backend is touched', async () => {
    const before = locked.backend.seen.filter((s) => s.url !== '/api/instance').length;
    for (const [method, path] of [['GET', '/projects'], ['GET', '/projects/stream'], ['POST', '/projects'], ['GET', '/fs?path=/'], ['GET', `/p/${encodeProject(locked.root)}/api/x`], ['PUT', '/hub/icon']]) {
      const r = await raw(locked.at(path!), { method, ...(method === 'GET' ? {} : { body: '{}' }) });
      expect(r.status, `${method} ${path}`).toBe(401);
      expect(json(r).error.code).toBe('UNAUTHENTICATED');
    }
    expect(locked.backend.seen.filter((s) => s.url !== '/api/instance').length).toBe(before);
    const ws = await upgradeStatus(locked.at(`/p/${encodeProject(locked.root)}/ws`));
    expect(ws).toBe(401);
  });

  it('login → the cookie works (HttpOnly, SameSite=Lax); logout revokes it', async () => {
    const r = await login(locked, PASSWORD);
    expect(r.status).toBe(200);
    const setCookie = r.headers['set-cookie']![0]!;
    expect(setCookie).toMatch(/^trellis_session=[A-Za-z0-9_-]{43};/);
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    const cookie = cookieOf(r);
    expect((await raw(locked.at('/projects'), { headers: { Cookie: cookie } })).status).toBe(200);
    const proxied = await raw(locked.at(`/p/${encodeProject(locked.root)}/api/x`), { headers: { Cookie: `${cookie}; theme=dark` } });
    expect(proxied.status).toBe(200);
    // The gateway's cookie never reaches the backend; the others do.
    expect(json(proxied).cookie).toBe('theme=dark');
    const seen = locked.backend.seen.find((s) => s.url === '/api/x')!;
    expect(JSON.stringify(seen.headers)).not.toContain(cookie.split('=')[1]);
    expect((await raw(locked.at('/auth/logout'), { method: 'POST', headers: { Cookie: cookie } })).status).toBe(204);
    expect((await raw(locked.at('/projects'), { headers: { Cookie: cookie } })).status).toBe(401);
  });

  it('wrong password ×5 → 401 each, then 429 with Retry-After, even for the right password', async () => {
    const s = await setup({ password: true });
    for (let i = 0; i < 5; i++) {
      const r = await login(s, `wrong ${i}`);
      expect(r.status).toBe(401);
      expect(json(r).error.code).toBe('BAD_PASSWORD');
    }
    const limited = await login(s, PASSWORD);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.headers['set-cookie']).toBeUndefined();
  });

  it('a forged or stale session id is no login', async () => {
    const forged = `trellis_session=${Buffer.alloc(32).toString('base64url')}`;
    expect((await raw(locked.at('/projects'), { headers: { Cookie: forged } })).status).toBe(401);
  });

  it('Host: attacker.example → refused on every route (DNS rebinding), WebSocket included', async () => {
    for (const path of ['/projects', '/', `/p/${encodeProject(open.root)}/api/x`, '/auth/status']) {
      const r = await raw(open.at(path), { headers: { Host: 'attacker.example' } });
      expect(r.status, path).toBe(403);
    }
    expect(await upgradeStatus(open.at(`/p/${encodeProject(open.root)}/ws`), { Host: 'attacker.example' })).toBe(403);
    // Loopback names and *.localhost are fine.
    for (const host of ['localhost', 'app.localhost', `127.0.0.1:${open.gw.port}`, `[::1]:${open.gw.port}`]) {
      expect((await raw(open.at('/projects'), { headers: { Host: host } })).status, host).toBe(200);
    }
  });

  it('a mutation with a foreign Origin, or a WebSocket upgrade from one → refused', async () => {
    const before = open.backend.seen.length;
    const post = await raw(open.at('/projects'), { method: 'POST', headers: { Origin: 'http://attacker.example' }, body: JSON.stringify({ path: tempRepo() }) });
    expect(post.status).toBe(403);
    const proxied = await raw(open.at(`/p/${encodeProject(open.root)}/api/issues`), { method: 'POST', headers: { Origin: 'http://attacker.example' }, body: '{}' });
    expect(proxied.status).toBe(403);
    expect(await upgradeStatus(open.at(`/p/${encodeProject(open.root)}/ws`), { Origin: 'http://attacker.example' })).toBe(403);
    expect(open.backend.seen.length).toBe(before);
    // The gateway's own origin may.
    const same = await raw(open.at(`/p/${encodeProject(open.root)}/api/issues`), { method: 'POST', headers: { Origin: open.gw.url.replace(/\/$/, '') }, body: '{}' });
    expect(same.status).toBe(200);
  });

  it('a browser mutation with no Origin but Sec-Fetch-Site cross-site → refused; a CLI with neither → judged by auth alone', async () => {
    const r = await raw(open.at(`/projects/${encodeProject(open.root)}/doctor`), { method: 'POST', headers: { 'Sec-Fetch-Site': 'cross-site' } });
    expect(r.status).toBe(403);
    expect((await raw(open.at('/hub/icon'), { method: 'PUT', headers: { 'Sec-Fetch-Site': 'same-site', 'If-Match': '"absent"' }, body: '{"icon":"x"}' })).status).toBe(403);
    expect((await raw(open.at('/hub/icon'), { method: 'PUT', headers: { 'If-Match': '"absent"' }, body: '{"icon":"x"}' })).status).toBe(200);
  });

  it('gates: open needs no login; a project password opens only that project; admin-gated needs admin', async () => {
    const openRoot = tempRepo();
    const pwRoot = tempRepo();
    const s = await setup({ password: true, gates: { [encodeProject(openRoot)]: 'open', [encodeProject(pwRoot)]: { password: await hashPassword('project pass 1') } } });
    const extra = await Promise.all([standInBackend(openRoot), standInBackend(pwRoot)]);
    await publishRecord(s.home, openRoot, extra[0]!.url, extra[0]!.instanceId);
    await publishRecord(s.home, pwRoot, extra[1]!.url, extra[1]!.instanceId);
    try {
      expect((await raw(s.at(`/p/${encodeProject(openRoot)}/api/x`))).status).toBe(200);
      expect((await raw(s.at(`/p/${encodeProject(pwRoot)}/api/x`))).status).toBe(401);
      const r = await login(s, 'project pass 1', { project: encodeProject(pwRoot) });
      expect(r.status).toBe(200);
      const cookie = cookieOf(r);
      expect((await raw(s.at(`/p/${encodeProject(pwRoot)}/api/x`), { headers: { Cookie: cookie } })).status).toBe(200);
      // Logged in, but without the scope: 403.
      expect((await raw(s.at(`/p/${encodeProject(s.root)}/api/x`), { headers: { Cookie: cookie } })).status).toBe(403);
      expect((await raw(s.at('/projects'), { headers: { Cookie: cookie } })).status).toBe(403);
      // The admin password is not a project password's substitute for that login route, and vice versa.
      expect((await login(s, 'project pass 1')).status).toBe(401);
    } finally {
      for (const e of extra) await e.close();
    }
  });

  it('a hub.json that does not parse shuts every door (503 naming it) until it is fixed', async () => {
    const s = await setup({ password: true });
    const cookie = cookieOf(await login(s, PASSWORD));
    const good = readFileSync(join(s.home, 'hub.json'), 'utf8');
    writeFileSync(join(s.home, 'hub.json'), '{"adminPassword": ');
    for (const path of ['/projects', `/p/${encodeProject(s.root)}/api/x`, '/auth/status', '/']) {
      const r = await raw(s.at(path), { headers: { Cookie: cookie } });
      expect(r.status, path).toBe(503);
      expect(json(r).error).toMatchObject({ code: 'HUB_CONFIG_BROKEN' });
      expect(json(r).error.message).toContain('hub.json');
    }
    writeFileSync(join(s.home, 'hub.json'), good);
    expect((await raw(s.at('/auth/status'))).status).toBe(200);
  });

  it('a new admin password ends every session', async () => {
    const s = await setup({ password: true });
    const cookie = cookieOf(await login(s, PASSWORD));
    expect((await raw(s.at('/projects'), { headers: { Cookie: cookie } })).status).toBe(200);
    writeFileSync(join(s.home, 'hub.json'), JSON.stringify({ adminPassword: await hashPassword('another password') }));
    expect((await raw(s.at('/projects'), { headers: { Cookie: cookie } })).status).toBe(401);
  });
});

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
    ws.on('error', (e) => reject(e));
  });
}

describe('TLS on the one port', () => {
  let s: Setup;
  let cert: { cert: string; key: string };
  beforeAll(async () => {
    cert = throwawayCert();
    s = await setup({ password: true, tls: cert });
  });

  it('every surface answers over HTTPS, with a __Host- Secure cookie', async () => {
    const ca = cert.cert;
    expect((await raw(s.at('/projects'), { ca })).status).toBe(401);
    const r = await login(s, PASSWORD, {}, ca);
    const setCookie = r.headers['set-cookie']![0]!;
    expect(setCookie).toMatch(/^__Host-trellis_session=/);
    expect(setCookie).toContain('Secure');
    expect(setCookie).toContain('Path=/');
    const cookie = cookieOf(r);
    expect((await raw(s.at('/projects'), { ca, headers: { Cookie: cookie } })).status).toBe(200);
    const proxied = await raw(s.at(`/p/${encodeProject(s.root)}/api/x`), { ca, headers: { Cookie: `${cookie}; a=b` } });
    expect(json(proxied).cookie).toBe('a=b');
    const echoed = await new Promise<string>((resolve, reject) => {
      const ws = new WebSocket(s.at(`/p/${encodeProject(s.root)}/ws`).replace(/^https/, 'wss'), { ca, headers: { Cookie: cookie } });
      ws.on('open', () => ws.send('over tls'));
      ws.on('message', (m) => (resolve(m.toString()), ws.close()));
      ws.on('error', reject);
    });
    expect(echoed).toBe('over tls');
    expect((await raw(s.at('/'), { ca })).headers['content-type']).toContain('text/html');
  });

  it('a plaintext HTTP request to the TLS port gets a 400 naming https and no data', async () => {
    const reply = await new Promise<string>((resolve, reject) => {
      const sock = net.connect(s.gw.port, '127.0.0.1', () => sock.write(`GET /projects HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
      let got = '';
      sock.on('data', (d) => (got += d));
      sock.on('close', () => resolve(got));
      sock.on('error', reject);
    });
    expect(reply).toMatch(/^HTTP\/1\.1 400 /);
    expect(reply).toContain('https');
    expect(reply).not.toContain('projects":');
    expect(reply).not.toContain('<html');
  });

  it('a TLS client that does not trust the certificate gets nowhere', async () => {
    const err = await new Promise<Error>((resolve) => {
      const sock = tls.connect({ port: s.gw.port, host: '127.0.0.1' }, () => resolve(new Error('connected')));
      sock.on('error', resolve);
    });
    expect(err.message).not.toBe('connected');
  });
});

describe('trellis dashboard (CLI)', () => {
  it('a taken port exits non-zero naming it, exactly like serve', async () => {
    const blocker = net.createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as net.AddressInfo).port;
    const cwd = tempDir();
    try {
      const d = await trellis(cwd, ['dashboard', '--port', String(port)]);
      const s = await trellis(cwd, ['serve', '--port', String(port)]);
      expect(d.code).toBe(1);
      expect(d.stderr).toContain(`trellis: port ${port} is already in use on 127.0.0.1. Repair:`);
      expect(d.stderr.split('\n')[0]).toBe(s.stderr.split('\n').find((l) => l.includes('already in use')));
    } finally {
      blocker.close();
    }
  }, 60_000);

  it('a non-loopback bind without a password refuses to start', async () => {
    const cwd = tempDir();
    const r = await trellis(cwd, ['dashboard', '--host', '0.0.0.0', '--port', '0']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("refusing to listen on 0.0.0.0 without an admin password");
    expect(r.stderr).toContain('trellis dashboard password');
  });

  it('dashboard password from stdin stores an scrypt hash, never the plaintext, atomically beside other keys', async () => {
    const cwd = tempDir();
    const home = join(cwd, '.trellis-home');
    const first = await trellis(cwd, ['dashboard', 'password'], { input: 'hunter2hunter2\n' });
    expect(first.code, first.stderr).toBe(0);
    const text = readFileSync(join(home, 'hub.json'), 'utf8');
    expect(text).not.toContain('hunter2');
    const hub = readHubConfig(home);
    expect(hub.adminPassword).toMatch(/^\$scrypt\$ln=\d+,r=\d+,p=\d+\$/);
    expect(await verifyPassword('hunter2hunter2', hub.adminPassword!)).toBe(true);
    expect(await verifyPassword('hunter2hunter3', hub.adminPassword!)).toBe(false);
    const short = await trellis(cwd, ['dashboard', 'password'], { input: 'short\n' });
    expect(short.code).toBe(1);
    expect(readFileSync(join(home, 'hub.json'), 'utf8')).toBe(text);
  });

  it('with a password, a non-loopback bind starts and answers', async () => {
    const cwd = tempDir();
    await trellis(cwd, ['dashboard', 'password'], { input: 'hunter2hunter2\n' });
    const { spawn } = await import('node:child_process');
    const { BIN, testEnv } = await import('./helpers/repo.js');
    const child = spawn(process.execPath, [BIN, 'dashboard', '--host', '0.0.0.0', '--port', '0'], { cwd, env: testEnv(cwd), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => (stderr += d));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d) => {
          out += d;
          const m = /trellis: dashboard at .*\n/.exec(out);
          if (m) resolve(m[0]);
        });
        child.on('exit', (code) => reject(new Error(`exited ${code}`)));
      });
      // What it prints is an address a browser can open, with where it listens beside it.
      const m = /^trellis: dashboard at (http:\/\/127\.0\.0\.1:(\d+)\/) \(listening on 0\.0\.0\.0:(\d+)\)\n$/.exec(line);
      expect(m, line).not.toBeNull();
      expect(m![2]).toBe(m![3]);
      expect((await raw(`${m![1]}projects`)).status).toBe(401);
      await waitFor(() => stderr.includes('lists no allowedHosts'), 'the allowedHosts warning', 10_000);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});
