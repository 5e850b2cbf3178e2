import { readFileSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHubServer } from '../src/gateway/hub-server.js';
import { bindPublic } from '../src/http/bind.js';
import { hashPassword, readHubConfig, verifyPassword } from '../src/store/host/hub-config.js';
import { json, raw, startTestGateway, type RawResponse, type TestGateway } from './helpers/gateway.js';
import { cleanupRepos, tempDir } from './helpers/repo.js';

/*
 * Issue 34, deliverable 8: the admin password from the gateway's page (POST /auth/password). The gateway
 * is a door to a shell, so every way in that must stay shut is tried on a real socket, and each refusal
 * must leave hub.json exactly as it was.
 */

afterAll(cleanupRepos);
const gateways: TestGateway[] = [];
afterAll(async () => {
  for (const g of gateways) await g.close();
});

const OLD = 'correct horse battery staple';
const NEW = 'a brand new passphrase';

async function gateway(password?: string): Promise<{ home: string; gw: TestGateway; origin: string }> {
  const home = tempDir();
  if (password) writeFileSync(join(home, 'hub.json'), JSON.stringify({ adminPassword: await hashPassword(password), icon: 'kept' }));
  const gw = await startTestGateway(home);
  gateways.push(gw);
  return { home, gw, origin: gw.url.replace(/\/$/, '') };
}

const hubText = (home: string): string | null => {
  try {
    return readFileSync(join(home, 'hub.json'), 'utf8');
  } catch {
    return null;
  }
};

/** POST /auth/password as the gateway's own page sends it (its Origin, JSON), unless `headers` says otherwise. */
const change = (url: string, origin: string | null, body: unknown, headers: Record<string, string> = {}): Promise<RawResponse> =>
  raw(new URL('/auth/password', url).href, { method: 'POST', headers: { ...(origin ? { Origin: origin } : {}), ...headers }, body: JSON.stringify(body) });

const loginCookie = async (url: string, password: string): Promise<string> => {
  const r = await raw(new URL('/auth/login', url).href, { method: 'POST', body: JSON.stringify({ password }) });
  expect(r.status).toBe(200);
  return r.headers['set-cookie']![0]!.split(';')[0]!;
};

const isAdmin = async (url: string, cookie: string): Promise<boolean> => (await raw(new URL('/projects', url).href, { headers: { Cookie: cookie } })).status === 200;

/** A non-loopback IPv4 address of this machine: a client connecting to it arrives from it, not from loopback. */
const lanAddress = (): string => {
  const a = Object.values(networkInterfaces())
    .flat()
    .find((x) => x && x.family === 'IPv4' && !x.internal)?.address;
  if (!a) throw new Error('this machine has no non-loopback IPv4 address; the non-loopback row needs one');
  return a;
};

describe('POST /auth/password: who may set the admin password', () => {
  it('the first password, from this machine through the page: stored as a hash beside the other keys, and the setter is logged in', async () => {
    const { home, gw, origin } = await gateway();
    writeFileSync(join(home, 'hub.json'), JSON.stringify({ icon: 'kept' }));
    expect(json(await raw(new URL('/auth/status', gw.url).href))).toMatchObject({ passwordSet: false, mayChangePassword: true });
    const r = await change(gw.url, origin, { password: NEW });
    expect(r.status, r.body).toBe(200);
    expect(json(r)).toEqual({ ok: true, first: true });
    const hub = readHubConfig(home);
    expect(hub.icon).toBe('kept');
    expect(hubText(home)).not.toContain(NEW);
    expect(await verifyPassword(NEW, hub.adminPassword!)).toBe(true);
    // The page that set it goes on as admin; a client without the cookie is no longer admin.
    const cookie = r.headers['set-cookie']![0]!.split(';')[0]!;
    expect(await isAdmin(gw.url, cookie)).toBe(true);
    expect((await raw(new URL('/projects', gw.url).href)).status).toBe(401);
    // From now on, another "first" set is a change without the current password: refused.
    const again = await change(gw.url, origin, { password: 'someone else entirely' });
    expect(again.status).toBe(401);
    expect(await verifyPassword(NEW, readHubConfig(home).adminPassword!)).toBe(true);
  });

  it('a change names the current password, ends every other login, and keeps the changer logged in under a fresh id', async () => {
    const { home, gw, origin } = await gateway(OLD);
    const changer = await loginCookie(gw.url, OLD);
    const other = await loginCookie(gw.url, OLD);
    const r = await change(gw.url, origin, { password: NEW, current: OLD }, { Cookie: changer });
    expect(r.status, r.body).toBe(200);
    expect(json(r)).toEqual({ ok: true, first: false });
    const fresh = r.headers['set-cookie']![0]!.split(';')[0]!;
    expect(fresh).not.toBe(changer);
    expect([await isAdmin(gw.url, fresh), await isAdmin(gw.url, changer), await isAdmin(gw.url, other)]).toEqual([true, false, false]);
    expect(await verifyPassword(NEW, readHubConfig(home).adminPassword!)).toBe(true);
    expect(readHubConfig(home).icon).toBe('kept');
    // The old password logs nobody in; the new one does.
    expect((await raw(new URL('/auth/login', gw.url).href, { method: 'POST', body: JSON.stringify({ password: OLD }) })).status).toBe(401);
    expect(await isAdmin(gw.url, await loginCookie(gw.url, NEW))).toBe(true);
  });

  it('the attacks, each refused with hub.json untouched', async () => {
    const locked = await gateway(OLD);
    const admin = await loginCookie(locked.gw.url, OLD);
    const open = await gateway();
    // A gateway reached from the network: bound to this machine's LAN address, so the client is not loopback.
    const ip = lanAddress();
    const lanHome = tempDir();
    const hub = createHubServer({ home: lanHome, tls: false, extraHosts: [ip] });
    const port = await bindPublic(hub.server, 0, ip);
    gateways.push({ hub, port, url: `http://${ip}:${port}/`, close: () => hub.close() });
    const lanUrl = `http://${ip}:${port}/`;
    // The same with a password: an admin logged in from the network, over plain http.
    const lanLockedHome = tempDir();
    writeFileSync(join(lanLockedHome, 'hub.json'), JSON.stringify({ adminPassword: await hashPassword(OLD) }));
    const lockedHub = createHubServer({ home: lanLockedHome, tls: false, extraHosts: [ip] });
    const lockedPort = await bindPublic(lockedHub.server, 0, ip);
    gateways.push({ hub: lockedHub, port: lockedPort, url: `http://${ip}:${lockedPort}/`, close: () => lockedHub.close() });
    const lanLockedUrl = `http://${ip}:${lockedPort}/`;
    const lanAdmin = await loginCookie(lanLockedUrl, OLD);
    // Its page is told not to offer the form (an action the page shows can succeed).
    expect(json(await raw(`${lanLockedUrl}auth/status`, { headers: { Cookie: lanAdmin } }))).toMatchObject({ admin: true, mayChangePassword: false });
    // That gateway does hear this client, and judges it as one from the network (its status says so).
    expect(json(await raw(`${lanUrl}auth/status`))).toMatchObject({ passwordSet: false, admin: false, mayChangePassword: false });

    const rows: [string, { url: string; home: string }, string | null, unknown, Record<string, string>, number, string][] = [
      ['no password set, a client that is not on this machine', { url: lanUrl, home: lanHome }, `http://${ip}:${port}`, { password: NEW }, {}, 403, 'FORBIDDEN'],
      ['no password set, a page on another site (foreign Origin)', { url: open.gw.url, home: open.home }, 'http://attacker.example', { password: NEW }, {}, 403, 'FORBIDDEN'],
      ['no password set, another port of this machine (another site)', { url: open.gw.url, home: open.home }, 'http://127.0.0.1:1', { password: NEW }, {}, 403, 'FORBIDDEN'],
      ['no password set, no Origin at all (not the page)', { url: open.gw.url, home: open.home }, null, { password: NEW }, {}, 403, 'FORBIDDEN'],
      ['no password set, no Origin but Sec-Fetch-Site: cross-site', { url: open.gw.url, home: open.home }, null, { password: NEW }, { 'Sec-Fetch-Site': 'cross-site' }, 403, 'FORBIDDEN'],
      ['no password set, a form post (text/plain, no preflight)', { url: open.gw.url, home: open.home }, open.origin, { password: NEW }, { 'Content-Type': 'text/plain' }, 415, 'INVALID_INPUT'],
      ['password set, not logged in, even with the right current one', { url: locked.gw.url, home: locked.home }, locked.origin, { password: NEW, current: OLD }, {}, 401, 'UNAUTHENTICATED'],
      ['password set, logged in, no current password', { url: locked.gw.url, home: locked.home }, locked.origin, { password: NEW }, { Cookie: admin }, 401, 'BAD_PASSWORD'],
      ['password set, logged in, wrong current password', { url: locked.gw.url, home: locked.home }, locked.origin, { password: NEW, current: 'guess' }, { Cookie: admin }, 401, 'BAD_PASSWORD'],
      ['password set, logged in, cross-origin with the right current one', { url: locked.gw.url, home: locked.home }, 'http://attacker.example', { password: NEW, current: OLD }, { Cookie: admin }, 403, 'FORBIDDEN'],
      ['password set, logged in, no Origin with the right current one', { url: locked.gw.url, home: locked.home }, null, { password: NEW, current: OLD }, { Cookie: admin }, 403, 'FORBIDDEN'],
      ['password set, an admin on another machine over plain http', { url: lanLockedUrl, home: lanLockedHome }, `http://${ip}:${lockedPort}`, { password: NEW, current: OLD }, { Cookie: lanAdmin }, 403, 'HTTPS_REQUIRED'],
      ['a new password too short', { url: locked.gw.url, home: locked.home }, locked.origin, { password: 'short', current: OLD }, { Cookie: admin }, 400, 'INVALID_INPUT'],
      ['a new password with a control character', { url: locked.gw.url, home: locked.home }, locked.origin, { password: 'tab\there in it', current: OLD }, { Cookie: admin }, 400, 'INVALID_INPUT'],
    ];
    for (const [name, at, origin, body, headers, status, code] of rows) {
      const before = hubText(at.home);
      const r = await change(at.url, origin, body, headers);
      expect([name, r.status, json(r).error?.code]).toEqual([name, status, code]);
      expect(r.headers['set-cookie'], name).toBeUndefined();
      expect(hubText(at.home), name).toBe(before);
    }
    // The admin's login survived every refusal.
    expect(await isAdmin(locked.gw.url, admin)).toBe(true);
  });

  it('wrong current passwords are limited as logins are: the sixth in a minute is 429, the right one included', async () => {
    const { home, gw, origin } = await gateway(OLD);
    const admin = await loginCookie(gw.url, OLD);
    const before = hubText(home);
    for (let i = 0; i < 5; i++) expect((await change(gw.url, origin, { password: NEW, current: `guess ${i}` }, { Cookie: admin })).status).toBe(401);
    const limited = await change(gw.url, origin, { password: NEW, current: OLD }, { Cookie: admin });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // The login form shares the count: the password form is no second way to guess.
    expect((await raw(new URL('/auth/login', gw.url).href, { method: 'POST', body: JSON.stringify({ password: OLD }) })).status).toBe(429);
    expect(hubText(home)).toBe(before);
  });
});
