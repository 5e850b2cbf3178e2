import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeProject } from '../src/store/trellis-home.js';
import { readEndpointRecord } from '../src/store/host/online-verdict.js';
import { hashPassword } from '../src/store/host/hub-config.js';
import { onlineHub } from '../src/store/host/hub-record.js';
import { json, raw, until } from './helpers/gateway.js';
import { cleanupRepos, ROOT, tempDir, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { startServe, type ServeProcess } from './helpers/serve.js';

afterAll(cleanupRepos);
const running: ServeProcess[] = [];
const pids: number[] = [];
afterAll(async () => {
  for (const s of running) await s.stop('SIGTERM');
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {}
  }
  await until(() => pids.every((p) => !alive(p)) || undefined, 'detached processes to exit', 20_000);
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const PASSWORD = 'public face password';

function project(): { root: string; home: string } {
  const root = tempRepo();
  writeFileSync(join(root, 'trellis.json'), '{}\n');
  return { root, home: join(tempDir(), 'home') };
}

describe('trellis serve --public', () => {
  it('refuses to start without an admin password', async () => {
    const { root, home } = project();
    const r = await trellis(root, ['serve', '--public', '--port', '0'], { env: { TRELLIS_HOME: home } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("serve --public refuses to start without an admin password. Repair: run 'trellis dashboard password'");
  });

  it('the loopback proxy works without a password (it is TRELLIS_API_URL); the public port demands it and shows only this project', async () => {
    const { root, home } = project();
    const { mkdirSync } = await import('node:fs');
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'hub.json'), JSON.stringify({ adminPassword: await hashPassword(PASSWORD) }));
    const s = await startServe(ROOT, root, { ...testEnv(root), TRELLIS_HOME: home }, ['--public', '--port', '0']);
    running.push(s);
    const loopback = s.url;
    const line = await s.line(/public gateway for .* at (http\S+)/);
    const pub = /at (http\S+?)p\//.exec(line)![1]!;
    const slot = encodeProject(root);
    expect(new URL(pub).port).not.toBe(new URL(loopback).port);

    const instance = json(await raw(new URL('/api/instance', loopback).href));
    expect(instance.apiUrl).toBe(loopback);
    const record = await readEndpointRecord(home, root);
    expect(record.online && record.record.url).toBe(loopback);

    expect((await raw(new URL(`/p/${slot}/api/instance`, pub).href)).status).toBe(401);
    expect((await raw(new URL('/projects', pub).href)).status).toBe(401);
    const login = await raw(new URL('/auth/login', pub).href, { method: 'POST', body: JSON.stringify({ password: PASSWORD }) });
    expect(login.status).toBe(200);
    const cookie = login.headers['set-cookie']![0]!.split(';')[0]!;
    const through = await raw(new URL(`/p/${slot}/api/instance`, pub).href, { headers: { Cookie: cookie } });
    expect(through.status).toBe(200);
    expect(json(through).instanceId).toBe(instance.instanceId);
    const list = json(await raw(new URL('/projects', pub).href, { headers: { Cookie: cookie } }));
    expect(list.projects.map((p: { id: string }) => p.id)).toEqual([slot]);
    expect((await raw(new URL('/p/other-000000000000/api/instance', pub).href, { headers: { Cookie: cookie } })).status).toBe(404);
    expect(await s.stop('SIGTERM')).toBe(0);
  }, 60_000);
});

describe('trellis serve ui', () => {
  it('starts what is missing (backend and dashboard, detached), catalogs only this project, prints its page; a second run reuses both', async () => {
    const { root, home } = project();
    const other = project();
    const first = await trellis(root, ['serve', 'ui', '--port', '0'], { env: { TRELLIS_HOME: home } });
    const record = await readEndpointRecord(home, root);
    const hub = await onlineHub(home);
    if (record.online) pids.push(record.record.pid);
    if (hub) pids.push(hub.pid);
    expect(first.code, first.stderr).toBe(0);
    expect(record.online).toBe(true);
    expect(hub).not.toBeNull();
    const url = first.stdout.trim();
    expect(url).toBe(new URL(`p/${encodeProject(root)}/`, hub!.url).href);
    const page = await raw(url);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    const list = json(await raw(new URL('/projects', hub!.url).href));
    expect(list.projects.find((p: { root: string }) => p.root === root)).toMatchObject({ online: true, cataloged: true });
    const catalog = JSON.parse(readFileSync(join(home, 'projects.json'), 'utf8'));
    expect(catalog.projects.map((p: { root: string }) => p.root)).toEqual([root]);
    expect(list.projects.some((p: { root: string }) => p.root === other.root)).toBe(false);

    const second = await trellis(root, ['serve', 'ui', '--port', '0'], { env: { TRELLIS_HOME: home } });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout.trim()).toBe(url);
    const again = await readEndpointRecord(home, root);
    expect(again.online && again.record.instanceId).toBe(record.online && record.record.instanceId);
    expect((await onlineHub(home))!.instanceId).toBe(hub!.instanceId);
  }, 60_000);
});
