import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { encodeProject } from '../src/store/trellis-home.js';
import { hashPassword } from '../src/store/host/hub-config.js';
import { forgeKey, ROUTE_TABLE, rowKey } from '../src/http/route-table.js';
import { json, publishRecord, raw, standInBackend, startTestGateway, type StandIn, type TestGateway } from './helpers/gateway.js';
import { cleanupRepos, tempDir, tempRepo } from './helpers/repo.js';

/**
 * Issue 30, row 2: a project password opens the project's data and issues, not a shell. Whatever runs
 * commands as the host user — spawn, a prompt, raw keys, an interrupt, resume, checks, merge, uploads,
 * sync, the pane WebSocket opened for input — needs admin or a gate that grants `shell`. Before the fix a
 * project-gate login spawned (201) and typed into the pane (101), reading hub.json's admin hash.
 * The backend is a stand-in that records what reaches it: a refusal must come before any upstream contact.
 */

const ADMIN = 'correct horse battery staple';
const DATA_PW = 'data only password';
const SHELL_PW = 'shell granting password';

let gw: TestGateway;
let dataId: string;
let shellId: string;
let openId: string;
let dataB: StandIn;
let shellB: StandIn;
const cookies: Record<'data' | 'shell' | 'admin' | 'none', string> = { data: '', shell: '', admin: '', none: '' };

async function project(home: string): Promise<{ id: string; b: StandIn }> {
  const root = tempRepo();
  const b = await standInBackend(root);
  await publishRecord(home, root, b.url, b.instanceId);
  return { id: encodeProject(root), b };
}

async function login(password: string, project?: string): Promise<string> {
  const r = await raw(new URL('/auth/login', gw.url).href, { method: 'POST', body: JSON.stringify({ password, ...(project ? { project } : {}) }) });
  expect(r.status).toBe(200);
  return r.headers['set-cookie']![0]!.split(';')[0]!;
}

beforeAll(async () => {
  const home = tempDir();
  const d = await project(home);
  const s = await project(home);
  const o = await project(home);
  [dataId, dataB, shellId, shellB, openId] = [d.id, d.b, s.id, s.b, o.id];
  writeFileSync(
    join(home, 'hub.json'),
    JSON.stringify({
      adminPassword: await hashPassword(ADMIN),
      gates: { [dataId]: { password: await hashPassword(DATA_PW) }, [shellId]: { password: await hashPassword(SHELL_PW), shell: true }, [openId]: 'open' },
    }),
  );
  gw = await startTestGateway(home);
  cookies.data = await login(DATA_PW, dataId);
  cookies.shell = await login(SHELL_PW, shellId);
  cookies.admin = await login(ADMIN);
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await dataB?.close();
  await shellB?.close();
  cleanupRepos();
});

/** A row's path with its parameters filled in (an eval scenario's POST is its run). */
const filled = (path: string) =>
  path.replace(':id', 's1').replace(':n', '1').replace(':action', 'resolve').replace(':event', 'Stop').replace(':hash', 'ab12').replace('/api/eval/*', '/api/eval/checkout/pays/run').replace('/*', '/');
const bodyOf = (path: string) => (path === '/api/uploads' ? 'bytes' : path === '/api/sessions' ? '{"harness":"shell","task":"x"}' : '{"body":"id","choice":"Yes","reason":"r"}');
const postsOf = (scope: string) => ROUTE_TABLE.filter((r) => r.scope === scope && r.method === 'POST').map((r) => ({ name: rowKey(r), path: filled(r.path), body: bodyOf(r.path) }));

/** Every shell route of the route table, as written and as the probe's hostile spellings of it. */
const SHELL_ACTIONS = [
  ...postsOf('shell'),
  { name: 'prompt, percent-encoded', path: '/api/sessions/s1/%70rompt', body: '{"body":"x"}' },
];
/** A dot segment the backend's URL parser resolves before routing: `/api/x/../sessions`, and its spellings. */
const DOTTED = (path: string) => [path.replace(/^\/api\//, '/api/x/../'), path.replace(/\/([^/]+)$/, '/x/%2e%2e/$1'), path.replace(/^\/api\//, '/api/./'), path.replace(/^\/api\//, '/api/X/.%2E/')];
const OWNER_ACTIONS = postsOf('owner');
const AGENT_ACTIONS = postsOf('agent');
const DATA_ACTIONS = postsOf('data');

/** A POST whose request target is sent exactly as written: a dot segment reaches the gateway unresolved. */
const post = (id: string, path: string, body: string, cookie: string) => raw(gw.url, { path: `/p/${id}${path}`, method: 'POST', body, headers: cookie ? { Cookie: cookie } : {} });

/** A WebSocket handshake whose request target is sent exactly as written; its status (101 when joined). */
function upgrade(id: string, path: string, cookie: string): Promise<number> {
  if (/\/\.|%2e/i.test(path)) {
    return new Promise((resolve, reject) => {
      const { hostname, port } = new URL(gw.url);
      const req = http.request({ hostname, port, path: `/p/${id}${path}`, agent: false, headers: { Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13', 'Sec-WebSocket-Key': 'dGhlIHNhbXBsZSBub25jZQ==', ...(cookie ? { Cookie: cookie } : {}) } });
      req.on('upgrade', (_res, socket) => (socket.destroy(), resolve(101)));
      req.on('response', (res) => (res.resume(), resolve(res.statusCode ?? 0)));
      req.on('error', reject);
      req.end();
    });
  }
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(new URL(`/p/${id}${path}`, gw.url).href.replace(/^http/, 'ws'), { headers: { Cookie: cookie } });
    ws.on('unexpected-response', (_req, res) => (resolve(res.statusCode ?? 0), ws.terminate()));
    ws.on('open', () => (ws.close(), resolve(101)));
    ws.on('error', reject);
  });
}

describe('a project password opens data and issues; a shell needs admin or a gate with "shell" (the route table)', () => {
  it.each(SHELL_ACTIONS)('$name: 403 for a project-gate login, before the backend sees it', async ({ path, body }) => {
    const before = dataB.seen.length;
    const r = await post(dataId, path, body, cookies.data);
    expect(r.status).toBe(403);
    expect(json(r).error.message).toMatch(/runs commands as this machine's user.*"shell"/);
    expect(dataB.seen.length).toBe(before);
  });

  it.each(SHELL_ACTIONS)('$name: reaches the backend for a gate that grants shell, and for admin', async ({ path, body }) => {
    expect((await post(shellId, path, body, cookies.shell)).status).toBe(200);
    expect(shellB.seen.at(-1)?.method).toBe('POST');
    expect((await post(dataId, path, body, cookies.admin)).status).toBe(200);
  });

  // Issue 46's probe: `POST /p/<id>/api/x/../sessions` spawned (201) with a project password, and with no
  // cookie at an `open` gate. Now every dot segment is refused (400) before any upstream contact.
  it.each(SHELL_ACTIONS.filter((a) => a.name.startsWith('POST')))('$name with dot segments: 400 for a project login and for no login at an open gate; nothing reaches the backend', async ({ path, body }) => {
    for (const dotted of DOTTED(path)) {
      const before = dataB.seen.length;
      const r = await post(dataId, dotted, body, cookies.data);
      expect(r.status, dotted).toBe(400);
      expect(json(r).error.message, dotted).toMatch(/dot segment/);
      expect(dataB.seen.length, dotted).toBe(before);
      expect((await post(openId, dotted, body, '')).status, dotted).toBe(400);
    }
  });

  it('a path the backend has no route for is unreachable through the gateway (deny by default): 404 before the backend', async () => {
    const before = dataB.seen.length;
    for (const path of ['//api/Sessions', '/api/Sessions', '/api/sessions/s1/prompt/', '/api/nothing']) {
      const r = await post(dataId, path, '{}', cookies.admin);
      expect(r.status, path).toBe(404);
    }
    expect(dataB.seen.length).toBe(before);
  });

  it.each(OWNER_ACTIONS)('$name (the owner\'s): 403 for a project login and for a shell gate, 401 with no login at an open gate; reaches the backend for admin', async ({ path, body }) => {
    const before = dataB.seen.length + shellB.seen.length;
    const r = await post(dataId, path, body, cookies.data);
    expect(r.status).toBe(403);
    expect(json(r).error.message).toMatch(/the owner's to decide: it needs the admin login/);
    expect((await post(shellId, path, body, cookies.shell)).status).toBe(403);
    expect((await post(openId, path, body, '')).status).toBe(401);
    expect(dataB.seen.length + shellB.seen.length).toBe(before);
    expect((await post(dataId, path, body, cookies.admin)).status).toBe(200);
    expect(dataB.seen.at(-1)?.url).toBe(path);
  });

  it.each(AGENT_ACTIONS)('$name (an agent\'s hook signal): never through the gateway, not even for admin', async ({ path }) => {
    const before = dataB.seen.length;
    for (const cookie of [cookies.data, cookies.admin]) {
      const r = await post(dataId, path, '{"hook_event_name":"Stop"}', cookie);
      expect(r.status).toBe(403);
      expect(json(r).error.message).toMatch(/agent's hook signal/);
    }
    expect((await post(openId, path, '{}', '')).status).toBe(403);
    expect(dataB.seen.length).toBe(before);
  });

  it.each(DATA_ACTIONS)('$name: open to a project login (issues and evidence)', async ({ path, body }) => {
    expect((await post(dataId, path, body, cookies.data)).status).toBe(200);
    expect(dataB.seen.at(-1)?.url).toBe(path);
  });

  it('an open gate gives data to anyone, a shell to no one without admin (401 asks for the login)', async () => {
    expect((await raw(new URL(`/p/${openId}/api/issues`, gw.url).href)).status).toBe(200);
    expect((await post(openId, '/api/sessions', '{}', '')).status).toBe(401);
    expect((await post(openId, '/api/sessions', '{}', cookies.data)).status).toBe(403);
    expect((await post(openId, '/api/sessions', '{}', cookies.admin)).status).toBe(200);
  });

  it('the pane WebSocket: read-only for a project-gate login (input mode 403), both for a shell gate; a dot segment is refused (400)', async () => {
    expect(await upgrade(dataId, '/api/sessions/s1/socket', cookies.data)).toBe(403);
    expect(await upgrade(dataId, '/api/sessions/s1/socket?mode=write&mode=read', cookies.data)).toBe(403);
    expect(await upgrade(dataId, '/api/sessions/s1/socket?mode=read', cookies.data)).toBe(101);
    expect(await upgrade(shellId, '/api/sessions/s1/socket', cookies.shell)).toBe(101);
    expect(await upgrade(dataId, '/api/sessions/s1/socket', cookies.admin)).toBe(101);
    const before = dataB.seen.length;
    for (const dotted of DOTTED('/api/sessions/s1/socket')) {
      expect(await upgrade(dataId, dotted, cookies.data), dotted).toBe(400);
      expect(await upgrade(openId, dotted, ''), dotted).toBe(400);
    }
    expect(dataB.seen.length).toBe(before);
  });

  it('data and issues stay open to the project gate: reads, a new issue, a reply', async () => {
    expect((await raw(new URL(`/p/${dataId}/api/sessions`, gw.url).href, { headers: { Cookie: cookies.data } })).status).toBe(200);
    expect((await post(dataId, '/api/issues', '{"concern":"x"}', cookies.data)).status).toBe(200);
    expect((await post(dataId, '/api/issues/1/reply', '{"body":"x"}', cookies.data)).status).toBe(200);
  });

  it('GET /auth/status?project=<id> tells the page which scope it has and which routes of the table it may use', async () => {
    const status = async (cookie: string, id: string) => json(await raw(new URL(`/auth/status?project=${id}`, gw.url).href, { headers: { Cookie: cookie } }));
    expect((await status(cookies.data, dataId)).shell).toBe(false);
    expect((await status(cookies.shell, shellId)).shell).toBe(true);
    expect((await status(cookies.admin, dataId)).shell).toBe(true);
    expect((await status('', openId)).shell).toBe(false);
    // A row's write on a forge issue is listed as `METHOD path (forge)` where the login holds its forgeScope.
    const keys = (scopes: string[]) => [
      ...ROUTE_TABLE.filter((r) => scopes.includes(r.scope)).map(rowKey),
      ...ROUTE_TABLE.filter((r) => scopes.includes(r.scope) && 'forgeScope' in r && scopes.includes(r.forgeScope)).map(forgeKey),
    ];
    expect(await status(cookies.data, dataId)).toMatchObject({ scopes: ['read', 'data'], routes: keys(['read', 'data']) });
    expect(await status('', openId)).toMatchObject({ scopes: ['read', 'data'], routes: keys(['read', 'data']) });
    expect(await status(cookies.shell, shellId)).toMatchObject({ scopes: ['read', 'data', 'shell'], routes: keys(['read', 'data', 'shell']) });
    expect(await status(cookies.admin, dataId)).toMatchObject({ scopes: ['read', 'data', 'shell', 'owner'], routes: keys(['read', 'data', 'shell', 'owner']) });
    // A login that does not open the project may do nothing there.
    expect(await status(cookies.data, shellId)).toMatchObject({ shell: false, scopes: [], routes: [] });
  });
});
