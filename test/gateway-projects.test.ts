import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { DASHBOARD_CSP } from '../src/http/dashboard-assets.js';
import { serveProject, type Served } from '../src/http/serve.js';
import { recordPath } from '../src/store/host/endpoint-record.js';
import { encodeProject } from '../src/store/trellis-home.js';
import { readEndpointRecord } from '../src/store/host/online-verdict.js';
import { openProject } from '../src/store/compose/open-project.js';
import { json, publishRecord, raw, standInBackend, startTestGateway, until, type StandIn, type TestGateway } from './helpers/gateway.js';
import { cleanupRepos, git, ok, tempDir, tempRepo, testEnv } from './helpers/repo.js';
import { demoRepo } from './helpers/server.js';

afterAll(cleanupRepos);

let home: string;
let gw: TestGateway;
let online: string;
let offline: string;
let backend: Served;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  home = tempDir();
  online = await demoRepo();
  offline = tempRepo();
  writeFileSync(join(offline, 'trellis.json'), '{"name": "Offline Co", "icon": "🌙"}\n');
  backend = await serveProject(openProject(online), { port: 0 });
  closers.push(() => backend.close());
  await publishRecord(home, online, backend.url, backend.instanceId);
  gw = await startTestGateway(home);
  closers.push(() => gw.close());
  for (const path of [online, offline]) expect((await raw(new URL('/projects', gw.url).href, { method: 'POST', body: JSON.stringify({ path }) })).status).toBe(201);
}, 60_000);
afterAll(async () => {
  for (const c of closers.reverse()) await c();
});

const at = (path: string) => new URL(path, gw.url).href;
const projects = async () => json(await raw(at('/projects'))) as { projects: any[]; catalogError?: string };

describe('GET /projects', () => {
  it('lists both registered projects, one online with its counts and one offline, with identity from trellis.json', async () => {
    const list = await projects();
    const on = list.projects.find((p) => p.root === online);
    const off = list.projects.find((p) => p.root === offline);
    expect(on).toMatchObject({ id: encodeProject(online), online: true, url: `/p/${encodeProject(online)}/`, cataloged: true, liveSessions: 0 });
    expect(on.openIssues).toBeGreaterThan(0);
    expect(off).toMatchObject({ id: encodeProject(offline), online: false, name: 'Offline Co', icon: '🌙', reason: 'no endpoint record' });
    expect(off.openIssues).toBeUndefined();
  });

  it('lists a record-claimed project nobody registered, and drops one whose root is gone', async () => {
    const claimed = tempRepo();
    const standIn = await standInBackend(claimed);
    await publishRecord(home, claimed, standIn.url, standIn.instanceId);
    const gone = join(tempDir(), 'vanished');
    mkdirSync(gone);
    await publishRecord(home, gone, standIn.url, 'x');
    execFileSync('rm', ['-rf', gone]);
    const list = await projects();
    expect(list.projects.find((p) => p.root === claimed)).toMatchObject({ online: true, cataloged: false });
    expect(list.projects.some((p) => p.root === gone)).toBe(false);
    execFileSync('rm', ['-rf', join(home, 'projects', encodeProject(claimed)), join(home, 'projects', encodeProject(gone))]);
    await standIn.close();
  });
});

describe('/p/:id proxy', () => {
  it('answers /api/graph with the backend’s own bytes, and ETag/304 works through it', async () => {
    const direct = await raw(new URL('/api/graph', backend.url).href);
    const proxied = await raw(at(`/p/${encodeProject(online)}/api/graph`));
    expect(proxied.status).toBe(200);
    expect(proxied.body).toBe(direct.body);
    expect(proxied.headers.etag).toBe(direct.headers.etag);
    expect(proxied.headers['x-content-type-options']).toBe('nosniff');
    const again = await raw(at(`/p/${encodeProject(online)}/api/graph`), { headers: { 'If-None-Match': proxied.headers.etag as string } });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
  });

  it('serves the project’s dashboard page through /p/<id>/, and sends /p/<id> there (its API is relative to its folder)', async () => {
    const bare = await raw(at(`/p/${encodeProject(online)}?x=1`));
    expect(bare.status).toBe(308);
    expect(bare.headers.location).toBe(`/p/${encodeProject(online)}/?x=1`);
    const page = await raw(at(`/p/${encodeProject(online)}/`));
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('<script type="module"');
    expect(page.headers['content-security-policy']).toMatch(/script-src 'self'/);
  });

  it('streams request bodies through: an issue opened through /p lands in the backend', async () => {
    const r = await raw(at(`/p/${encodeProject(online)}/api/issues`), { method: 'POST', body: JSON.stringify({ concern: 'through the gateway', by: 'tester' }) });
    expect(r.status, r.body).toBe(201);
    const id = json(r).id ?? json(r).issue?.id;
    const shown = await raw(new URL(`/api/issues/${id}`, backend.url).href);
    expect(json(shown).concern).toBe('through the gateway');
  });

  it('delivers an SSE graph event through /p when a thread is written', async () => {
    const es = new EventSource(at(`/p/${encodeProject(online)}/api/graph/stream`));
    try {
      await new Promise<void>((resolve, reject) => {
        es.addEventListener('ready', () => resolve());
        es.onerror = (e) => reject(new Error(`SSE error ${JSON.stringify(e)}`));
      });
      const got = new Promise<string>((resolve) => es.addEventListener('graph', (e) => resolve(e.data)));
      await ok(online, ['issue', 'open', 'written while watching', '--by', 'tester']);
      expect(JSON.parse(await got).cause).toBe('issues');
    } finally {
      es.close();
    }
  });

  it('echoes over a WebSocket through /p, with the prefix stripped', async () => {
    const root = tempRepo();
    const standIn = await standInBackend(root);
    closers.push(() => standIn.close());
    await publishRecord(home, root, standIn.url, standIn.instanceId);
    const ws = new WebSocket(at(`/p/${encodeProject(root)}/ws/echo?x=1`).replace(/^http/, 'ws'));
    const echoed = await new Promise<string>((resolve, reject) => {
      ws.on('open', () => ws.send('hello through the gateway'));
      ws.on('message', (m) => resolve(m.toString()));
      ws.on('error', reject);
    });
    ws.close();
    expect(echoed).toBe('hello through the gateway');
    expect(standIn.seen.some((s) => s.method === 'UPGRADE' && s.url === '/ws/echo?x=1')).toBe(true);
  });

  it('streams a request body through without buffering it: the backend answers while the client is still sending', async () => {
    const root = tempRepo();
    const standIn = await standInBackend(root);
    closers.push(() => standIn.close());
    await publishRecord(home, root, standIn.url, standIn.instanceId);
    const body = await new Promise<string>((resolve, reject) => {
      const req = http.request(at(`/p/${encodeProject(root)}/api/evidence`), { method: 'POST', headers: { 'content-type': 'application/octet-stream' } }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => {
          text += d;
          // Only once the backend has answered the first chunk does the rest of the upload go out.
          if (text === 'got-first\n') req.end(Buffer.alloc(1 << 20, 1));
        });
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.write(Buffer.alloc(16 << 10, 1));
    });
    expect(body).toBe(`got-first\ndone ${(16 << 10) + (1 << 20)}\n`);
  });

  it('strips the gateway’s cookies and passes the others, and the prefix', async () => {
    const root = tempRepo();
    const standIn = await standInBackend(root);
    closers.push(() => standIn.close());
    await publishRecord(home, root, standIn.url, standIn.instanceId);
    const r = await raw(at(`/p/${encodeProject(root)}/api/echo?q=1`), { headers: { Cookie: 'trellis_session=secret; theme=dark; __Host-trellis_session=secret2' } });
    expect(json(r)).toMatchObject({ url: '/api/echo?q=1', cookie: 'theme=dark' });
    const got = standIn.seen.find((s) => s.url === '/api/echo?q=1')!;
    expect(JSON.stringify(got.headers)).not.toContain('secret');
    // A browser's (allowed) Origin reaches the backend as the backend's own: it takes session input from loopback only.
    await raw(at(`/p/${encodeProject(root)}/api/issues?q=2`), { method: 'POST', headers: { Host: `gateway.localhost:${new URL(at('/')).port}`, Origin: `http://gateway.localhost:${new URL(at('/')).port}` }, body: '{}' });
    const posted = standIn.seen.find((s) => s.url === '/api/issues?q=2')!;
    expect(posted.headers.origin).toBe(new URL(standIn.url).origin);
  });

  it('404s an offline project and an unknown id without contacting any upstream', async () => {
    // A backend that was this project's (proxied to, so the gateway knew it), then its record went away.
    const root = tempRepo();
    const standIn = await standInBackend(root);
    closers.push(() => standIn.close());
    await publishRecord(home, root, standIn.url, standIn.instanceId);
    expect((await raw(at(`/p/${encodeProject(root)}/api/before`))).status).toBe(200);
    execFileSync('rm', [recordPath(home, root)]);
    const connections = standIn.connections;
    const requests = standIn.seen.length;
    const ws = (id: string) =>
      new Promise<number>((resolve) => {
        const socket = new WebSocket(at(`/p/${id}/ws`).replace(/^http/, 'ws'));
        socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
        socket.on('error', () => {});
      });
    const statuses = [
      (await raw(at(`/p/${encodeProject(root)}/api/graph`))).status,
      (await raw(at(`/p/${encodeProject(root)}/api/issues`), { method: 'POST', body: '{}' })).status,
      (await raw(at(`/p/${encodeProject(offline)}/api/graph`))).status,
      (await raw(at('/p/nobody-000000000000/api/graph'))).status,
      (await raw(at('/p/..%2F..%2Fetc/passwd'))).status,
      await ws(encodeProject(root)),
      await ws('nobody-000000000000'),
    ];
    expect(statuses).toEqual([404, 404, 404, 404, 404, 404, 404]);
    expect(json(await raw(at(`/p/${encodeProject(root)}/api/graph`))).error.code).toBe('NOT_FOUND');
    // Not one new connection, not one request: nothing reached any upstream.
    expect(standIn.connections).toBe(connections);
    expect(standIn.seen.length).toBe(requests);
  });

  it('never proxies to a crashed serve’s record, a recycled port answering another instance, or a record in the wrong slot', async () => {
    const crashedRoot = tempRepo();
    const recycledRoot = tempRepo();
    const wrongRoot = tempRepo();
    // Crashed: the record names a port nobody listens on (taken, then freed).
    const dead = net.createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const deadPort = (dead.address() as net.AddressInfo).port;
    await new Promise<void>((r) => dead.close(() => r()));
    await publishRecord(home, crashedRoot, `http://127.0.0.1:${deadPort}/`, 'crashed', { pid: 999_999 });
    // Recycled: the port now answers as another instance.
    const other = await standInBackend(recycledRoot, 'someone-else');
    closers.push(() => other.close());
    await publishRecord(home, recycledRoot, other.url, 'the-one-that-died');
    // Wrong slot: a record for another root sits in this project's slot.
    const impostor = await standInBackend(offline);
    closers.push(() => impostor.close());
    const path = recordPath(home, wrongRoot);
    mkdirSync(join(path, '..'), { recursive: true });
    await publishRecord(home, offline, impostor.url, impostor.instanceId);
    writeFileSync(path, readFileSync(recordPath(home, offline)));
    execFileSync('rm', [recordPath(home, offline)]);
    for (const root of [crashedRoot, recycledRoot, wrongRoot]) {
      expect((await raw(at('/projects'), { method: 'POST', body: JSON.stringify({ path: root }) })).status).toBe(201);
    }
    const list = await projects();
    for (const root of [crashedRoot, recycledRoot, wrongRoot]) {
      expect(list.projects.find((p) => p.root === root)?.online).toBe(false);
      expect((await raw(at(`/p/${encodeProject(root)}/api/secret`))).status).toBe(404);
    }
    // Only the liveness probe ever reached them; no proxied request did.
    for (const s of [other, impostor]) expect(s.seen.filter((x) => x.url !== '/api/instance')).toEqual([]);
    for (const root of [crashedRoot, recycledRoot, wrongRoot]) await raw(at(`/projects/${encodeProject(root)}`), { method: 'DELETE' });
    execFileSync('rm', ['-rf', join(home, 'projects', encodeProject(crashedRoot)), join(home, 'projects', encodeProject(recycledRoot)), join(home, 'projects', encodeProject(wrongRoot))]);
  });

  it('serves the dashboard bundle at / (no-cache page, immutable hashed assets, the one strict CSP); other paths and the API stay JSON', async () => {
    const page = await raw(at('/'));
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.headers['cache-control']).toBe('no-cache');
    expect(page.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    // The same bytes the project's backend serves at /p/<id>/ (one bundle, one policy).
    const proxied = await raw(at(`/p/${encodeProject(online)}/`));
    expect(proxied.body).toBe(page.body);
    expect(proxied.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    expect(page.body.match(/<script\b[^>]*>/g)!.every((t) => / src="\.\/assets\/[^"]+\.js"/.test(t))).toBe(true);
    const js = /src="\.\/(assets\/[^"]+\.js)"/.exec(page.body)![1]!;
    const asset = await raw(at(`/${js}`));
    expect([asset.status, asset.headers['content-type'], asset.headers['cache-control']]).toEqual([200, 'text/javascript; charset=utf-8', 'public, max-age=31536000, immutable']);
    expect(asset.headers['content-security-policy']).toBe(DASHBOARD_CSP);
    for (const path of ['/some/page', '/projects/', '/auth/', '/fs/']) {
      const r = await raw(at(path));
      expect([path, r.status, r.headers['content-type']]).toEqual([path, 404, 'application/json']);
      expect(json(r).error.code).toBe('NOT_FOUND');
    }
    expect(json(await raw(at('/health'))).role).toBe('gateway');
  });

  it('answers an offline project’s page itself (the page says "offline"); its API and health stay JSON 404s', async () => {
    const id = encodeProject(offline);
    const page = await raw(at(`/p/${id}/?from=list`));
    expect([page.status, page.headers['content-type'], page.headers['content-security-policy']]).toEqual([200, 'text/html; charset=utf-8', DASHBOARD_CSP]);
    expect(page.body).toBe((await raw(at('/'))).body);
    for (const path of [`/p/${id}/api/graph`, `/p/${id}/health`, `/p/${id}/some/file`]) {
      const r = await raw(at(path));
      expect([path, r.status, json(r).error.code]).toEqual([path, 404, 'NOT_FOUND']);
    }
    const head = await raw(at(`/p/${id}/`), { method: 'HEAD' });
    expect([head.status, head.body]).toEqual([200, '']);
  });

  it('names the harnesses init takes (GET /hub/harnesses), auto first', async () => {
    const { harnesses } = json(await raw(at('/hub/harnesses'))) as { harnesses: string[] };
    expect(harnesses[0]).toBe('auto');
    expect(harnesses).toEqual(expect.arrayContaining(['shell', 'claude', 'codex']));
  });
});

describe('config seam', () => {
  const cfg = () => at(`/projects/${encodeProject(offline)}/config`);

  it('GET gives the raw committed file with its revision; a stale PUT is 412 and leaves the bytes', async () => {
    writeFileSync(join(offline, 'trellis.local.json'), '{"onlyLocal": "do-not-leak"}\n');
    const r = await raw(cfg());
    expect(json(r)).toEqual({ name: 'Offline Co', icon: '🌙' });
    const etag = r.headers.etag as string;
    const put = await raw(cfg(), { method: 'PUT', headers: { 'If-Match': etag }, body: JSON.stringify({ name: 'Renamed', specRoot: 'specs' }) });
    expect(put.status, put.body).toBe(200);
    expect(JSON.parse(readFileSync(join(offline, 'trellis.json'), 'utf8'))).toEqual({ name: 'Renamed', specRoot: 'specs' });
    const before = readFileSync(join(offline, 'trellis.json'));
    const stale = await raw(cfg(), { method: 'PUT', headers: { 'If-Match': etag }, body: JSON.stringify({ name: 'Lost' }) });
    expect(stale.status).toBe(412);
    expect(json(stale).error.code).toBe('STALE_REVISION');
    expect(readFileSync(join(offline, 'trellis.json'))).toEqual(before);
    for (const path of ['/projects', `/projects/${encodeProject(offline)}/config`]) expect((await raw(at(path))).body).not.toContain('do-not-leak');
  });

  it('50 concurrent PUTs with the same revision: exactly one wins', async () => {
    const etag = (await raw(cfg())).headers.etag as string;
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => raw(cfg(), { method: 'PUT', headers: { 'If-Match': etag }, body: JSON.stringify({ name: `writer ${i}` }) })));
    const won = results.filter((r) => r.status === 200);
    expect(won).toHaveLength(1);
    expect(results.filter((r) => r.status === 412)).toHaveLength(49);
    const winner = JSON.parse(won[0]!.body).revision;
    expect((await raw(cfg())).headers.etag).toBe(`"${winner}"`);
  });

  it('refuses a non-object top level (400) and a PUT without If-Match (428)', async () => {
    const etag = (await raw(cfg())).headers.etag as string;
    const before = readFileSync(join(offline, 'trellis.json'));
    for (const body of ['[1,2]', '"text"', 'null', '{broken']) {
      const r = await raw(cfg(), { method: 'PUT', headers: { 'If-Match': etag }, body });
      expect(r.status, body).toBe(400);
      expect(json(r).error.code).toBe('INVALID_INPUT');
    }
    expect((await raw(cfg(), { method: 'PUT', body: '{}' })).status).toBe(428);
    expect(readFileSync(join(offline, 'trellis.json'))).toEqual(before);
  });

  it('the icon route changes only the icon, revision-checked', async () => {
    const r = await raw(cfg());
    const before = json(r);
    const put = await raw(at(`/projects/${encodeProject(offline)}/icon`), { method: 'PUT', headers: { 'If-Match': r.headers.etag as string }, body: JSON.stringify({ icon: '🫖' }) });
    expect(put.status).toBe(200);
    expect(json(await raw(cfg()))).toEqual({ ...before, icon: '🫖' });
    expect((await raw(at(`/projects/${encodeProject(offline)}/icon`), { method: 'PUT', headers: { 'If-Match': r.headers.etag as string }, body: JSON.stringify({ icon: 'x' }) })).status).toBe(412);
    const hub = await raw(at('/hub/icon'));
    expect((await raw(at('/hub/icon'), { method: 'PUT', headers: { 'If-Match': hub.headers.etag as string }, body: JSON.stringify({ icon: '🌿' }) })).status).toBe(200);
    expect(json(await raw(at('/hub/icon'))).icon).toBe('🌿');
    expect((await raw(at('/hub/icon'), { method: 'PUT', headers: { 'If-Match': hub.headers.etag as string }, body: JSON.stringify({ icon: 'x' }) })).status).toBe(412);
  });
});

describe('registration', () => {
  it('normalizes a linked worktree to its main checkout', async () => {
    const main = tempRepo();
    const wt = join(tempDir(), 'wt');
    git(main, 'worktree', 'add', '-q', wt, '-b', 'side');
    const r = await raw(at('/projects'), { method: 'POST', body: JSON.stringify({ path: wt }) });
    expect(r.status).toBe(201);
    expect(json(r).project.root).toBe(main);
    expect(json(r).project.id).toBe(encodeProject(main));
    await raw(at(`/projects/${encodeProject(main)}`), { method: 'DELETE' });
  });

  it('a plain folder only with gitInit; with init the real trellis init runs there', async () => {
    const plain = tempDir();
    const refused = await raw(at('/projects'), { method: 'POST', body: JSON.stringify({ path: plain }) });
    expect(refused.status).toBe(400);
    expect(json(refused).error.message).toContain('gitInit');
    // Beside it, which of the page's controls repairs it (the page says it in its own words, issue 34).
    expect(json(refused).needs).toBe('gitInit');
    const r = await raw(at('/projects'), { method: 'POST', body: JSON.stringify({ path: plain, gitInit: true, init: { harness: 'claude' } }) });
    expect(r.status, r.body).toBe(201);
    expect(JSON.parse(readFileSync(join(plain, 'trellis.json'), 'utf8')).harness).toBe('claude');
    expect(json(r).transcript).toContain('wrote trellis.json');
    const cat = JSON.parse(readFileSync(join(home, 'projects.json'), 'utf8'));
    expect(cat.projects.some((p: { root: string }) => p.root === plain)).toBe(true);
    // DELETE forgets it and never touches its files.
    expect((await raw(at(`/projects/${encodeProject(plain)}`), { method: 'DELETE' })).status).toBe(204);
    expect(existsSync(join(plain, 'trellis.json'))).toBe(true);
    expect((await projects()).projects.some((p) => p.root === plain)).toBe(false);
    expect((await raw(at(`/projects/${encodeProject(plain)}`), { method: 'DELETE' })).status).toBe(404);
  });

  it('a failing init returns its exit code and whole transcript, and the catalog file is unchanged', async () => {
    const broken = tempRepo();
    writeFileSync(join(broken, 'trellis.json'), '{not json');
    const before = readFileSync(join(home, 'projects.json'));
    const r = await raw(at('/projects'), { method: 'POST', body: JSON.stringify({ path: broken, init: {} }) });
    expect(r.status).toBe(422);
    const body = json(r);
    expect(body.exitCode).toBe(1);
    expect(body.transcript).toContain('$ trellis init');
    expect(body.transcript).toContain('is not valid JSON');
    expect(body.error.code).toBe('STEP_FAILED');
    expect(readFileSync(join(home, 'projects.json'))).toEqual(before);
  });

  it('bad requests are 400s naming the problem', async () => {
    for (const body of [{}, { path: 'relative/dir' }, { path: '/definitely/not/here' }, { path: offline, gitInit: 'yes' }, { path: offline, init: 'claude' }]) {
      const r = await raw(at('/projects'), { method: 'POST', body: JSON.stringify(body) });
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(json(r).error.code).toBe('INVALID_INPUT');
    }
  });
});

describe('host operations', () => {
  it('init and doctor run the real CLI in the project and return exit code and transcript', async () => {
    const init = json(await raw(at(`/projects/${encodeProject(offline)}/init`), { method: 'POST', body: '{}' }));
    expect(init.exitCode).toBe(0);
    expect(init.transcript).toContain('$ trellis init');
    const doctor = json(await raw(at(`/projects/${encodeProject(offline)}/doctor`), { method: 'POST' }));
    expect(doctor).toHaveProperty('exitCode');
    expect(doctor.transcript).toContain('git repository at');
    expect((await raw(at('/projects/nobody-000000000000/doctor'), { method: 'POST' })).status).toBe(404);
  });

  it('serve starts a detached backend that publishes its record and is proxied; /projects/stream pushes the change', async () => {
    const root = tempRepo();
    writeFileSync(join(root, 'trellis.json'), '{}\n');
    await raw(at('/projects'), { method: 'POST', body: JSON.stringify({ path: root }) });
    const es = new EventSource(at('/projects/stream'));
    const states: boolean[] = [];
    const sawOnline = new Promise<void>((resolve) =>
      es.addEventListener('projects', (e) => {
        const row = JSON.parse(e.data).projects.find((p: { root: string }) => p.root === root);
        states.push(!!row?.online);
        if (row?.online) resolve();
      }),
    );
    await until(() => states.length > 0, 'the first /projects/stream event');
    expect(states[0]).toBe(false);
    const r = await raw(at(`/projects/${encodeProject(root)}/serve`), { method: 'POST' });
    expect(r.status, r.body).toBe(200);
    const verdict = await readEndpointRecord(home, root);
    expect(verdict.online).toBe(true);
    const pid = verdict.online ? verdict.record.pid : 0;
    try {
      await sawOnline;
      expect(existsSync(join(home, 'projects', encodeProject(root), 'serve.log'))).toBe(true);
      expect((await raw(at(`/p/${encodeProject(root)}/api/instance`))).status).toBe(200);
      // Its death is pushed too.
      const sawOffline = new Promise<void>((resolve) =>
        es.addEventListener('projects', (e) => {
          if (JSON.parse(e.data).projects.find((p: { root: string }) => p.root === root)?.online === false) resolve();
        }),
      );
      process.kill(pid, 'SIGKILL');
      await sawOffline;
    } finally {
      es.close();
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
      // The killed supervisor's child exits when its parent's IPC channel closes.
      await until(() => !execFileSync('ps', ['-eo', 'args']).toString().includes(root) || undefined, 'the detached serve to be gone', 15_000);
    }
  }, 60_000);
});

describe('GET /projects/stream', () => {
  it('pushes to every open stream when the catalog changes and when a trellis.json changes', async () => {
    const root = tempRepo();
    const streams = [new EventSource(at('/projects/stream')), new EventSource(at('/projects/stream'))];
    const seen: string[][] = [[], []];
    const waiters: { i: number; test: (rows: { root: string; name: string }[]) => boolean; resolve: () => void }[] = [];
    streams.forEach((es, i) =>
      es.addEventListener('projects', (e) => {
        const rows = JSON.parse(e.data).projects as { root: string; name: string }[];
        seen[i]!.push(rows.find((r) => r.root === root)?.name ?? '-');
        for (const w of [...waiters]) if (w.i === i && w.test(rows)) (waiters.splice(waiters.indexOf(w), 1), w.resolve());
      }),
    );
    const when = (test: (rows: { root: string; name: string }[]) => boolean) =>
      Promise.all([0, 1].map((i) => new Promise<void>((resolve) => waiters.push({ i, test, resolve }))));
    try {
      await until(() => seen.every((s) => s.length > 0) || undefined, 'both streams’ first event');
      const registered = when((rows) => rows.some((r) => r.root === root));
      expect((await raw(at('/projects'), { method: 'POST', body: JSON.stringify({ path: root }) })).status).toBe(201);
      await registered;
      const renamed = when((rows) => rows.some((r) => r.root === root && r.name === 'Renamed Live'));
      writeFileSync(join(root, 'trellis.json'), '{"name": "Renamed Live"}\n');
      await renamed;
      for (const s of seen) expect(s.slice(-2)).toEqual([basenameOf(root), 'Renamed Live']);
    } finally {
      for (const es of streams) es.close();
      await raw(at(`/projects/${encodeProject(root)}`), { method: 'DELETE' });
    }
  });
});

const basenameOf = (p: string) => p.split('/').pop()!;

describe('GET /fs', () => {
  it('lists sub-folders, marks repositories and projects, reports symlinks without following them', async () => {
    const base = tempDir();
    mkdirSync(join(base, 'plain'));
    git(base, 'init', '-q', join(base, 'repo'));
    git(base, 'init', '-q', join(base, 'proj'));
    writeFileSync(join(base, 'proj', 'trellis.json'), '{}');
    writeFileSync(join(base, 'secret.txt'), 'top secret contents');
    symlinkSync('/etc', join(base, 'escape'));
    const r = await raw(at(`/fs?path=${encodeURIComponent(base)}`));
    expect(r.status).toBe(200);
    const listing = json(r);
    expect(listing.folders).toEqual([
      { name: 'escape', path: join(base, 'escape'), symlink: '/etc' },
      { name: 'plain', path: join(base, 'plain') },
      { name: 'proj', path: join(base, 'proj'), git: true, trellis: true },
      { name: 'repo', path: join(base, 'repo'), git: true },
    ]);
    expect(r.body).not.toContain('secret');
    expect((await raw(at('/fs?path=relative'))).status).toBe(400);
    expect((await raw(at('/fs?path=/no/such/dir'))).status).toBe(404);
  });
});

describe('a malformed catalog', () => {
  it('reads carry catalogError and still list record-claimed projects; writes are refused; the file is never rewritten', async () => {
    const h = tempDir();
    const g = await startTestGateway(h);
    const claimed = tempRepo();
    const standIn = await standInBackend(claimed);
    try {
      await publishRecord(h, claimed, standIn.url, standIn.instanceId);
      writeFileSync(join(h, 'projects.json'), '{"version": 1, "projects": [oops');
      const before = readFileSync(join(h, 'projects.json'));
      const list = json(await raw(new URL('/projects', g.url).href));
      expect(list.catalogError).toContain('not valid JSON');
      expect(list.projects.map((p: { root: string; online: boolean }) => [p.root, p.online])).toEqual([[claimed, true]]);
      const post = await raw(new URL('/projects', g.url).href, { method: 'POST', body: JSON.stringify({ path: tempRepo() }) });
      expect(post.status).toBe(409);
      expect(json(post).error.code).toBe('CATALOG_MALFORMED');
      expect((await raw(new URL(`/projects/${encodeProject(claimed)}`, g.url).href, { method: 'DELETE' })).status).toBe(409);
      expect(readFileSync(join(h, 'projects.json'))).toEqual(before);
    } finally {
      await standIn.close();
      await g.close();
    }
  });
});
