import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProject } from '../src/store/trellis-home.js';
import { launchChromium, screenshot, VIEWPORTS, watchPage } from './helpers/browser.js';
import { catalogProjects, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { cleanupRepos, ok, ROOT, tempDir, testEnv } from './helpers/repo.js';
import { startServe, type ServeProcess } from './helpers/serve.js';
import { demoRepo } from './helpers/server.js';
import { killTmux, waitFor } from './helpers/sessions.js';

/**
 * Desktop notifications in real Chromium (permission granted in the context): the host page shows the
 * gateway's notification for a real wait, closes it when the wait is answered, and a click opens the
 * session; the page never asks for permission by itself. Quiet settings save to hub.json from the page.
 */

let home: string;
let dir: string;
let serve: ServeProcess;
let gw: TestGateway;
let browser: Browser;
let page: Page;
let seen: ReturnType<typeof watchPage>;
let context: BrowserContext;
/** The session the tests make wait. */
let id: string;

type Note = { title: string; body: string; tag: string; closed: boolean };
const notes = (): Promise<Note[]> => page.evaluate(() => (window as unknown as { __notes: { title: string; body: string; tag: string; closed: boolean }[] }).__notes.map(({ title, body, tag, closed }) => ({ title, body, tag, closed })));
const cli = (...args: string[]) => ok(dir, args, { env: { TRELLIS_HOME: home } });

beforeAll(async () => {
  home = tempDir();
  dir = await demoRepo();
  writeFileSync(join(home, 'hub.json'), JSON.stringify({ notify: { debounceMs: 200 } }));
  catalogProjects(home, [dir]);
  serve = await startServe(ROOT, dir, { ...testEnv(dir), TRELLIS_HOME: home });
  gw = await startTestGateway(home);
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 800 }, permissions: ['notifications'], origin: gw.url.replace(/\/$/, '') } as never);
  await context.grantPermissions(['notifications'], { origin: gw.url.replace(/\/$/, '') });
  // Every Notification the page makes, and every time it asks for permission, recorded around the real ones.
  await context.addInitScript(() => {
    const Real = window.Notification;
    const w = window as unknown as { __notes: unknown[]; __asked: number };
    w.__notes = [];
    w.__asked = 0;
    class Recorded extends Real {
      constructor(title: string, options?: NotificationOptions) {
        super(title, options);
        const entry = { title, body: options?.body ?? '', tag: options?.tag ?? '', closed: false, note: this };
        w.__notes.push(entry);
        this.close = () => ((entry.closed = true), Real.prototype.close.call(this));
      }
      static override requestPermission(...args: Parameters<typeof Notification.requestPermission>) {
        w.__asked++;
        return Real.requestPermission(...args);
      }
      static override get permission() {
        return Real.permission;
      }
    }
    window.Notification = Recorded as typeof Notification;
  });
  page = await context.newPage();
  seen = watchPage(page);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await gw?.close();
  await serve?.stop('SIGKILL');
  killTmux(home);
  cleanupRepos();
});

describe('desktop notifications', () => {
  it('one notification for a real wait, closed when answered; a click opens the session; never a question on load', async () => {
    await page.goto(new URL('#/inbox', gw.url).href);
    await page.getByTestId('inbox-empty').waitFor({ timeout: 15_000 });
    expect(await page.evaluate(() => Notification.permission)).toBe('granted');
    // Permission already granted: no button to ask, and the page asked nothing by itself.
    expect(await page.getByRole('button', { name: 'Notify me' }).count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __asked: number }).__asked)).toBe(0);

    id = (await cli('session', 'spawn', 'Bake the bread', '--harness', 'shell')).trim();
    // Read over the serve's HTTP (the same showSession as `session show --json`): no CLI process per look.
    await waitFor('the session runs', async () => ((await (await fetch(new URL(`/api/sessions/${encodeURIComponent(id)}`, serve.url))).json()) as { state: string }).state === 'running');
    // Its first list is the baseline (what waits then is not news): a wait from now on is.
    await waitFor('the notifier follows the project', () => gw.hub.state.notifier!.settled);
    await cli('session', 'signal', id, 'permission');
    await waitFor('the page shows a notification', async () => (await notes()).length >= 1, 15_000);
    const [note] = await notes();
    expect(note).toMatchObject({ title: 'Bake the bread: permission', tag: `${encodeProject(dir)}/${id}/awaiting:permission`, closed: false });
    expect(note!.body).toMatch(/an agent needs you$/);

    await cli('session', 'signal', id, 'busy');
    await waitFor('the notification closes when answered', async () => (await notes())[0]!.closed, 15_000);

    // A second wait: its notification, clicked, opens the session's page through the gateway.
    await cli('session', 'signal', id, 'question');
    await waitFor('a second notification', async () => (await notes()).length >= 2, 15_000);
    expect((await notes()).map((n) => n.title)).toEqual(['Bake the bread: permission', 'Bake the bread: question']);
    await page.evaluate(() => {
      const n = (window as unknown as { __notes: { note: Notification }[] }).__notes[1]!.note;
      n.dispatchEvent(new Event('click'));
    });
    await expect.poll(() => page.url(), { timeout: 10_000 }).toBe(new URL(`/p/${encodeProject(dir)}/#/sessions/${id}`, gw.url).href);
    await page.getByTestId('session-state').first().waitFor({ timeout: 15_000 });

    // The project's own page (through the gateway) shows the gateway's notifications too.
    await cli('session', 'signal', id, 'busy');
    await cli('session', 'signal', id, 'permission');
    await waitFor('the project page shows the next wait', async () => (await notes()).length >= 1, 15_000);
    expect((await notes()).map((n) => n.title)).toEqual(['Bake the bread: permission']);
    expect(seen.errors).toEqual([]);
  }, 120_000);

  it('mutes a project and sets quiet hours from the page, into hub.json', async () => {
    await page.goto(new URL('#/inbox', gw.url).href);
    const form = page.getByTestId('notify-settings');
    await form.waitFor({ timeout: 15_000 });
    await form.getByTestId(`mute-${encodeProject(dir)}`).check();
    await form.getByTestId('quiet-on').check();
    await form.getByLabel('Quiet from').fill('21:30');
    await form.getByLabel('Quiet until').fill('06:45');
    await form.getByRole('button', { name: 'Save' }).click();
    await form.getByRole('status').waitFor({ timeout: 10_000 });
    const hubJson = JSON.parse(readFileSync(join(home, 'hub.json'), 'utf8'));
    expect(hubJson.notify).toEqual({ debounceMs: 200, mute: [encodeProject(dir)], quietHours: { from: '21:30', to: '06:45' } });
    // Read back after a reload: the page shows what hub.json holds.
    await page.reload();
    await page.getByTestId('notify-settings').waitFor({ timeout: 15_000 });
    expect(await page.getByTestId(`mute-${encodeProject(dir)}`).isChecked()).toBe(true);
    expect(await page.getByLabel('Quiet from').inputValue()).toBe('21:30');
    await page.setViewportSize(VIEWPORTS.phone);
    await screenshot(page, 'host-inbox-notify-phone');
    await page.setViewportSize(VIEWPORTS.desktop);

    // Muted: a new wait in the project is decided silent, and no notification shows.
    const notifier = gw.hub.state.notifier!;
    await cli('session', 'signal', id, 'busy');
    await cli('session', 'signal', id, 'question');
    await waitFor('the muted wait is decided', () => notifier.statusOf(`${encodeProject(dir)}/${id}/awaiting:question`) === 'silent', 15_000);
    // Unmuted and no quiet hours (saved from the page): the next wait shows, and it is the only one shown.
    await page.getByTestId(`mute-${encodeProject(dir)}`).uncheck();
    await page.getByTestId('quiet-on').uncheck();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByTestId('notify-settings').getByRole('status').waitFor({ timeout: 10_000 });
    await cli('session', 'signal', id, 'busy');
    await cli('session', 'signal', id, 'permission');
    await waitFor('the unmuted wait shows', async () => (await notes()).length >= 1, 15_000);
    expect((await notes()).map((n) => n.title)).toEqual(['Bake the bread: permission']);
  }, 90_000);
});

describe('the installable app', () => {
  it('has a manifest with icons and a service worker that shows a pushed wait and, on its withdraw, says the agent moved on', async () => {
    await page.goto(new URL('#/inbox', gw.url).href);
    const manifestUrl = await page.locator('link[rel=manifest]').getAttribute('href', { timeout: 15_000 });
    const manifest = (await (await fetch(new URL(manifestUrl!, gw.url))).json()) as { start_url: string; display: string; icons: { src: string; sizes: string }[] };
    expect(manifest).toMatchObject({ start_url: '/#/inbox', display: 'standalone' });
    // Each icon decodes in the browser at its declared size.
    for (const icon of manifest.icons.filter((i) => i.sizes !== 'any')) {
      const width = await page.evaluate(async (src) => (await createImageBitmap(await (await fetch(src)).blob())).width, icon.src);
      expect(`${width}x${width}`).toBe(icon.sizes);
    }
    expect(await page.evaluate(async () => (await navigator.serviceWorker.ready).active?.scriptURL)).toBe(new URL('/sw.js', gw.url).href);
    await expect.poll(() => page.getByTestId('push-on').count(), { timeout: 10_000 }).toBe(1);

    // A push as the push service would deliver it (DevTools delivers it to the worker, decrypted).
    const cdp = await context.newCDPSession(page);
    const registration = new Promise<string>((resolve) =>
      cdp.on('ServiceWorker.workerRegistrationUpdated', (e: { registrations: { registrationId: string; scopeURL: string }[] }) => {
        const r = e.registrations.find((x) => x.scopeURL === gw.url);
        if (r) resolve(r.registrationId);
      }),
    );
    await cdp.send('ServiceWorker.enable');
    const registrationId = await registration;
    const origin = gw.url.replace(/\/$/, '');
    const event = { type: 'wait', id: 'p1/s1/awaiting:auth', project: { id: 'p1', name: 'Bakery' }, session: { id: 's1', title: 'Proof the dough' }, waitsFor: 'auth', path: '/p/p1/#/sessions/s1', since: '', options: ['Yes', 'No'], actions: [{ action: 'answer:0', title: 'Yes' }] };
    const shown = () => page.evaluate(async () => (await (await navigator.serviceWorker.ready).getNotifications()).map((n) => `${n.title} | ${n.body} | ${n.tag}`));
    await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId, data: JSON.stringify(event) });
    await expect.poll(shown, { timeout: 10_000 }).toEqual(['Proof the dough: auth | Bakery · an agent needs you | p1/s1/awaiting:auth']);
    const answers = () => page.evaluate(async () => (await (await navigator.serviceWorker.ready).getNotifications()).map((n) => (n as unknown as { actions: { action: string }[] }).actions.filter((a) => a.action !== 'open').map((a) => a.action)));
    expect(await answers()).toEqual([['answer:0']]);
    // The wait ends with nobody answering (the gateway's withdraw says when): the notification is replaced,
    // same tag, by what happened, in ntfy's words, with nothing left to answer.
    await cdp.send('ServiceWorker.deliverPushMessage', { origin, registrationId, data: JSON.stringify({ ...event, type: 'withdraw', ended: { at: '14:03' } }) });
    await expect.poll(shown, { timeout: 10_000 }).toEqual(['Proof the dough: auth | the agent moved on at 14:03: nothing to answer | p1/s1/awaiting:auth']);
    expect(await answers()).toEqual([[]]);
  }, 60_000);
});
