import { statSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHubServer, type HubServer } from '../src/gateway/hub-server.js';
import { bindPublic } from '../src/http/bind.js';
import { encodeProject } from '../src/store/trellis-home.js';
import { hashPassword } from '../src/store/host/hub-config.js';
import { catalogProjects, json, raw, throwawayCert } from './helpers/gateway.js';
import { cleanupRepos, ok, ROOT, tempDir, testEnv } from './helpers/repo.js';
import { startServe, type ServeProcess } from './helpers/serve.js';
import { demoRepo } from './helpers/server.js';
import { killTmux, waitFor } from './helpers/sessions.js';
import { startPushService, type PushService } from './push/push-service.js';

/**
 * Web Push end to end without the internet: a login subscribes (a browser's keys, made here), a real
 * wait is pushed to a push service stand-in that checks the VAPID JWT and decrypts the payload per
 * RFC 8291; a 410 from it drops the subscription, and so does logging out.
 */

let home: string;
let dir: string;
let serve: ServeProcess;
let hub: HubServer;
let base: string;
let pushService: PushService;
let cookie: string;

const cli = (...args: string[]) => ok(dir, args, { env: { TRELLIS_HOME: home } });
const call = (path: string, init: { method?: string; body?: unknown } = {}) =>
  raw(new URL(path, base).href, { method: init.method ?? 'GET', headers: { cookie, origin: base.replace(/\/$/, '') }, ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}) });

beforeAll(async () => {
  home = tempDir();
  dir = await demoRepo();
  writeFileSync(join(home, 'hub.json'), JSON.stringify({ adminPassword: await hashPassword('hunter2 hunter2'), notify: { debounceMs: 200 } }));
  catalogProjects(home, [dir]);
  serve = await startServe(ROOT, dir, { ...testEnv(dir), TRELLIS_HOME: home });
  const tls = throwawayCert();
  pushService = await startPushService(tls);
  hub = createHubServer({ home, tls: false, pushAgent: new https.Agent({ ca: tls.cert }) });
  base = `http://127.0.0.1:${await bindPublic(hub.server, 0, '127.0.0.1')}/`;
  const login = await raw(new URL('/auth/login', base).href, { method: 'POST', headers: { origin: base.replace(/\/$/, '') }, body: JSON.stringify({ password: 'hunter2 hunter2' }) });
  expect(login.status).toBe(200);
  cookie = (login.headers['set-cookie'] as string[])[0]!.split(';')[0]!;
}, 60_000);

afterAll(async () => {
  await hub?.close();
  await pushService?.close();
  await serve?.stop('SIGKILL');
  killTmux(home);
  cleanupRepos();
});

describe('Web Push', () => {
  it('a wait reaches the push service signed and encrypted; a 410 drops the subscription', async () => {
    const key = json(await call('/hub/push/key')).publicKey as string;
    expect(Buffer.from(key, 'base64url')).toHaveLength(65);
    expect(statSync(join(home, 'vapid.json')).mode & 0o777).toBe(0o600);
    // The same key on every read: a subscription is bound to it.
    expect(json(await call('/hub/push/key')).publicKey).toBe(key);

    const http = await call('/hub/push/subscriptions', { method: 'POST', body: { endpoint: 'http://127.0.0.1:1/x', keys: pushService.subscription('/x').keys } });
    expect(http.status).toBe(400);
    expect(json(http).error.message).toMatch(/https:\/\//);
    expect((await call('/hub/push/subscriptions', { method: 'POST', body: pushService.subscription('/phone') })).status).toBe(201);
    expect(json(await call('/hub/push/subscriptions')).count).toBe(1);
    // Without a login: refused.
    expect((await raw(new URL('/hub/push/subscriptions', base).href, { method: 'POST', headers: { origin: base.replace(/\/$/, '') }, body: JSON.stringify(pushService.subscription('/other')) })).status).toBe(401);

    const id = (await cli('session', 'spawn', 'Bake the bread', '--harness', 'shell')).trim();
    await waitFor('the session runs', async () => JSON.parse(await cli('session', 'show', id, '--json')).state === 'running');
    // Its first list is the baseline (what waits then is not news): a wait from now on is.
    await waitFor('the notifier follows the project', () => hub.state.notifier!.settled);
    await cli('session', 'signal', id, 'permission');
    const first = await waitFor('the push service gets the wait', () => pushService.received[0], 15_000);
    expect(pushService.refused).toEqual([]);
    expect(first.k).toBe(key);
    expect(first.claims.aud).toBe(pushService.origin);
    expect(first.ttl).toBe('86400');
    expect(first.payload).toMatchObject({ type: 'wait', session: { id, title: 'Bake the bread' }, waitsFor: 'permission', path: `/p/${encodeProject(dir)}/#/sessions/${id}` });

    await cli('session', 'signal', id, 'busy');
    await waitFor('the withdrawal is pushed', () => pushService.received[1], 15_000);
    expect(pushService.received.map((r) => (r.payload as { type: string }).type)).toEqual(['wait', 'withdraw']);

    // The device is gone: the push service answers 410, and the hub forgets the subscription.
    pushService.answer = 410;
    await cli('session', 'signal', id, 'question');
    await waitFor('the subscription is dropped', async () => json(await call('/hub/push/subscriptions')).count === 0, 15_000);
    expect(hub.state.notifier!.push.size).toBe(0);
  }, 120_000);

  it('logging out drops the login’s subscriptions', async () => {
    pushService.answer = 201;
    expect((await call('/hub/push/subscriptions', { method: 'POST', body: pushService.subscription('/laptop') })).status).toBe(201);
    expect(hub.state.notifier!.push.size).toBe(1);
    expect((await call('/auth/logout', { method: 'POST' })).status).toBe(204);
    expect(hub.state.notifier!.push.size).toBe(0);
  });
});
