import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { encodeProject } from '../src/store/trellis-home.js';
import { hashPassword } from '../src/store/host/hub-config.js';
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

const SHELL_ACTIONS = [
  { name: 'spawn', path: '/api/sessions', body: '{"harness":"shell","task":"x"}' },
  { name: 'prompt', path: '/api/sessions/s1/prompt', body: '{"body":"grep -c adminPassword hub.json"}' },
  { name: 'raw keys', path: '/api/sessions/s1/rawkey', body: '{"keys":["C-c"]}' },
  { name: 'interrupt', path: '/api/sessions/s1/interrupt', body: '{}' },
  { name: 'resume', path: '/api/sessions/s1/resume', body: '{}' },
  { name: 'checks', path: '/api/sessions/s1/check', body: '{}' },
  { name: 'merge', path: '/api/sessions/s1/merge', body: '{}' },
  { name: 'upload', path: '/api/uploads', body: 'bytes' },
  { name: 'sync', path: '/api/sync', body: '{}' },
  { name: 'prompt, percent-encoded', path: '/api/sessions/s1/%70rompt', body: '{"body":"x"}' },
  { name: 'spawn, doubled slash and capitals', path: '//api/Sessions', body: '{}' },
];

const post = (id: string, path: string, body: string, cookie: string) => raw(new URL(`/p/${id}${path}`, gw.url).href, { method: 'POST', body, headers: cookie ? { Cookie: cookie } : {} });

function upgrade(id: string, path: string, cookie: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(new URL(`/p/${id}${path}`, gw.url).href.replace(/^http/, 'ws'), { headers: { Cookie: cookie } });
    ws.on('unexpected-response', (_req, res) => (resolve(res.statusCode ?? 0), ws.terminate()));
    ws.on('open', () => (ws.close(), resolve(101)));
    ws.on('error', reject);
  });
}

describe('a project password opens data and issues; a shell needs admin or a gate with "shell"', () => {
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

  it('an open gate gives data to anyone, a shell to no one without admin (401 asks for the login)', async () => {
    expect((await raw(new URL(`/p/${openId}/api/issues`, gw.url).href)).status).toBe(200);
    expect((await post(openId, '/api/sessions', '{}', '')).status).toBe(401);
    expect((await post(openId, '/api/sessions', '{}', cookies.data)).status).toBe(403);
    expect((await post(openId, '/api/sessions', '{}', cookies.admin)).status).toBe(200);
  });

  it('the pane WebSocket: read-only for a project-gate login (input mode 403), both for a shell gate', async () => {
    expect(await upgrade(dataId, '/api/sessions/s1/socket', cookies.data)).toBe(403);
    expect(await upgrade(dataId, '/api/sessions/s1/socket?mode=read&mode=write', cookies.data)).toBe(403);
    expect(await upgrade(dataId, '/api/sessions/s1/socket?mode=read', cookies.data)).toBe(101);
    expect(await upgrade(shellId, '/api/sessions/s1/socket', cookies.shell)).toBe(101);
    expect(await upgrade(dataId, '/api/sessions/s1/socket', cookies.admin)).toBe(101);
  });

  it('data and issues stay open to the project gate: reads, a new issue, a reply', async () => {
    expect((await raw(new URL(`/p/${dataId}/api/sessions`, gw.url).href, { headers: { Cookie: cookies.data } })).status).toBe(200);
    expect((await post(dataId, '/api/issues', '{"concern":"x"}', cookies.data)).status).toBe(200);
    expect((await post(dataId, '/api/issues/1/reply', '{"body":"x"}', cookies.data)).status).toBe(200);
  });

  it('GET /auth/status?project=<id> tells the page which scope it has', async () => {
    const status = async (cookie: string, id: string) => json(await raw(new URL(`/auth/status?project=${id}`, gw.url).href, { headers: { Cookie: cookie } })).shell;
    expect(await status(cookies.data, dataId)).toBe(false);
    expect(await status(cookies.shell, shellId)).toBe(true);
    expect(await status(cookies.admin, dataId)).toBe(true);
    expect(await status('', openId)).toBe(false);
  });
});
