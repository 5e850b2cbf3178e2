import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import type { Browser, BrowserContext, CDPSession, Page, Worker } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHubServer, type HubServer } from '../src/gateway/hub-server.js';
import { bindPublic } from '../src/http/bind.js';
import { agentProject, startFakeModel, stopAgents, type AgentProject, type FakeModel } from './helpers/agents.js';
import { launchChromium } from './helpers/browser.js';
import { catalogProjects, jsonRequest, throwawayCert } from './helpers/gateway.js';
import { cleanupRepos, ok, ROOT } from './helpers/repo.js';
import { startServe, type ServeProcess } from './helpers/serve.js';
import { waitFor } from './helpers/sessions.js';
import { startPushService, type PushService } from './push/push-service.js';

/**
 * Issue 43 end to end in Chromium: the real Claude Code (2.1.197, against the fake model) asks to run a
 * Bash command; the gateway pushes the wait, with its options, to the push service stand-in (VAPID
 * checked, payload decrypted as a browser does); the payload is delivered to the page's service worker
 * (DevTools' deliverPushMessage, as the push service would), which shows "Yes" and "No" beside "Open".
 * The action is taken through the worker's own click path (answerFromNotification, what its
 * notificationclick calls): it answers with the login's cookie, the command runs, the session goes on,
 * and the notification says so. The same push on a second device (another browser context with its own
 * worker), and replayed on the first, tapped again changes nothing and says who answered.
 */

const AGENT_MS = 45_000;
let fake: FakeModel;
let p: AgentProject;
let serve: ServeProcess;
let hub: HubServer;
let base: string;
let pushService: PushService;
let browser: Browser;
/** The phone: a browser context with the app's service worker; `second` another device of the same person. */
let phone: Device;
let page: Page;
/** The session of the first test, at its turn's end. */
let sessionId: string;

type Payload = { type: string; id: string; wait: string; session: { id: string }; waitsFor: string; options: string[]; actions: { action: string; title: string }[]; answered?: unknown; ended?: { at: string } };
const pushesFor = (id: string) => pushService.received.map((r) => r.payload as Payload).filter((x) => x.session.id === id);

interface Device {
  readonly context: BrowserContext;
  readonly page: Page;
  /** The notifications its worker shows. */
  shown(): Promise<{ title: string; body: string; tag: string; actions: string[] }[]>;
  /**
   * A push delivered to its worker as the push service would (DevTools' deliverPushMessage). A wait's push
   * is delivered until its worker shows it (its tag, its wait, not a final one): about one in six runs,
   * Chromium dropped a push delivered as another context's worker came and went (the worker never showed
   * it, and nothing was reported), which a push service's retry would cover.
   */
  deliver(payload: unknown): Promise<unknown>;
  /** The worker's click path for the shown notification's first action (what a tap on "Yes" runs). */
  tapFirstAction(): Promise<void>;
}

/** A browser context that opened the app: its page registered the service worker. */
async function device(): Promise<Device> {
  const context = await browser.newContext({ viewport: { width: 800, height: 800 } });
  await context.grantPermissions(['notifications'], { origin: base.replace(/\/$/, '') });
  const page = await context.newPage();
  const cdp: CDPSession = await context.newCDPSession(page);
  const registration = new Promise<string>((resolve) =>
    cdp.on('ServiceWorker.workerRegistrationUpdated', (e: { registrations: { registrationId: string; scopeURL: string }[] }) => {
      const r = e.registrations.find((x) => x.scopeURL === base);
      if (r) resolve(r.registrationId);
    }),
  );
  await cdp.send('ServiceWorker.enable');
  await page.goto(new URL('#/inbox', base).href);
  expect(await page.evaluate(async () => (await navigator.serviceWorker.ready).active?.scriptURL)).toBe(new URL('/sw.js', base).href);
  const registrationId = await registration;
  return {
    context,
    page,
    shown: () =>
      page.evaluate(async () =>
        (await (await navigator.serviceWorker.ready).getNotifications()).map((n) => ({ title: n.title, body: n.body, tag: n.tag, actions: (n as unknown as { actions: { title: string }[] }).actions.map((a) => a.title) })),
      ),
    deliver: async (payload) => {
      const send = () => cdp.send('ServiceWorker.deliverPushMessage', { origin: base.replace(/\/$/, ''), registrationId, data: JSON.stringify(payload) });
      const push = payload as Payload;
      if (push.type !== 'wait') return send();
      const showing = () =>
        page.evaluate(
          async ({ tag, wait }) => (await (await navigator.serviceWorker.ready).getNotifications({ tag })).some((n) => (n.data as { wait?: string; final?: boolean }).wait === wait && !(n.data as { final?: boolean }).final),
          { tag: push.id, wait: push.wait },
        );
      for (let tries = 1; ; tries++) {
        await send();
        if (await waitFor('the pushed wait shown', showing, 3_000).then(() => true, () => tries === 3 && Promise.reject(new Error(`the worker showed none of 3 deliveries of ${push.id}`)))) return;
      }
    },
    tapFirstAction: async () => {
      const sw: Worker = context.serviceWorkers()[0] ?? (await context.waitForEvent('serviceworker'));
      await sw.evaluate(async () => {
        const s = self as unknown as { registration: ServiceWorkerRegistration; answerFromNotification(n: Notification, action: string): Promise<void> };
        const [n] = await s.registration.getNotifications();
        await s.answerFromNotification(n!, (n as unknown as { actions: { action: string }[] }).actions[0]!.action);
      });
    },
  };
}
const shown = () => phone.shown();
const deliver = (payload: unknown) => phone.deliver(payload);
const tapFirstAction = () => phone.tapFirstAction();

beforeAll(async () => {
  fake = await startFakeModel();
  p = agentProject(fake, { claudeVersion: '2.1.197' });
  writeFileSync(join(p.dir, 'trellis.json'), '{}\n');
  mkdirSync(p.home, { recursive: true });
  writeFileSync(join(p.home, 'hub.json'), JSON.stringify({ notify: { debounceMs: 200 } }));
  catalogProjects(p.home, [p.dir]);
  serve = await startServe(ROOT, p.dir, p.env);
  const tls = throwawayCert();
  pushService = await startPushService(tls);
  hub = createHubServer({ home: p.home, tls: false, pushAgent: new https.Agent({ ca: tls.cert }) });
  base = `http://127.0.0.1:${await bindPublic(hub.server, 0, '127.0.0.1')}/`;
  // This machine's person (loopback, no password: the owner) subscribes a device at the stand-in.
  expect((await jsonRequest(base, '/hub/push/subscriptions', { body: pushService.subscription('/phone') })).status).toBe(201);

  browser = await launchChromium();
  phone = await device();
  page = phone.page;
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await hub?.close();
  await pushService?.close();
  await serve?.stop();
  if (p) stopAgents(p);
  await fake?.close();
  cleanupRepos();
});

describe('answering a real Claude Code permission from the phone', () => {
  it('the push carries Yes and No; the worker answers once; the command runs and the session goes on; a replay changes nothing and says so', async () => {
    await waitFor('the notifier follows the project', () => hub.state.notifier!.settled, 15_000);
    const id = await p.spawn('Touch a file [fake:bash curl -s http://127.0.0.1:9/ | sh; touch approved-file]', 'claude');
    await waitFor('awaiting{permission}', async () => (await p.show(id)).reason === 'permission', AGENT_MS);
    const push = await waitFor('the wait is pushed with its options', () => pushesFor(id).find((x) => x.type === 'wait' && x.waitsFor === 'permission'), 15_000);
    expect(pushService.refused).toEqual([]);
    expect(push.options[0]).toBe('Yes');
    expect(push.options.at(-1)).toBe('No');
    expect(push.actions.map((a) => a.title)).toEqual(['Yes', 'No']);

    await deliver(push);
    // Chromium shows two buttons (Notification.maxActions): the answers; a tap on the notification opens the session.
    const room = await page.evaluate(() => (Notification as unknown as { maxActions: number }).maxActions);
    const withOpen = (a: string[]) => (a.length < room ? [...a, 'Open'] : a);
    await expect.poll(async () => (await shown()).map((n) => n.actions), { timeout: 10_000 }).toEqual([withOpen(['Yes', 'No'])]);
    await tapFirstAction();
    const worktree = (await p.show(id)).worktree;
    await waitFor('the approved command to run', () => existsSync(join(worktree, 'approved-file')), AGENT_MS);
    await expect.poll(async () => (await shown()).map((n) => `${n.title} | ${n.body} | ${n.actions.join(',')}`), { timeout: 10_000 }).toEqual([
      `Answered: Yes | answered "Yes" from a notification: the agent is working | ${withOpen([]).join(',')}`,
    ]);
    // The session goes on: the turn ends after the command, as the fake model scripted it.
    await waitFor('its turn to end', async () => {
      const s = await p.show(id);
      return s.state === 'awaiting' && s.reason === 'turn-end';
    }, AGENT_MS);
    // The wait's withdrawal names the answer, for the other devices.
    const withdraw = await waitFor('the withdraw is pushed', () => pushesFor(id).find((x) => x.type === 'withdraw' && x.wait === push.wait), 15_000);
    expect(withdraw.answered).toMatchObject({ option: 'Yes', from: 'a notification' });

    // A second device taps "Yes" on the same push, and the phone's own push is replayed and tapped again:
    // nothing is typed, and each says who answered.
    const turns = fake.turns().length;
    const second = await device();
    await second.deliver(push);
    await expect.poll(async () => (await second.shown()).map((n) => n.actions), { timeout: 10_000 }).toEqual([withOpen(['Yes', 'No'])]);
    await second.tapFirstAction();
    await expect.poll(async () => (await second.shown()).map((n) => n.body), { timeout: 10_000 }).toEqual([expect.stringMatching(/^already answered: Yes, from a notification at \d\d:\d\d$/)]);
    await second.context.close();
    await deliver(push);
    await expect.poll(async () => (await shown()).map((n) => n.actions), { timeout: 10_000 }).toEqual([withOpen(['Yes', 'No'])]);
    await tapFirstAction();
    await expect.poll(async () => (await shown()).map((n) => n.body), { timeout: 10_000 }).toEqual([expect.stringMatching(/^already answered: Yes, from a notification at \d\d:\d\d$/)]);
    expect(await p.show(id)).toMatchObject({ state: 'awaiting', reason: 'turn-end' });
    expect(fake.turns().length).toBe(turns);
    sessionId = id;
  }, 150_000);

  it('a question without fixed options: no answers on the notification; it opens the session with the answer box focused; unanswered, its withdraw says the agent moved on', async () => {
    const id = sessionId;
    await ok(p.dir, ['session', 'signal', id, 'question'], { env: p.env });
    const push = await waitFor('the question is pushed', () => pushesFor(id).find((x) => x.type === 'wait' && x.waitsFor === 'question'), 15_000);
    expect(push).toMatchObject({ options: [], actions: [] });
    await deliver(push);
    const data = await waitFor('the question shows', async () => {
      const got = await page.evaluate(
        async (tag) => (await (await navigator.serviceWorker.ready).getNotifications({ tag })).map((n) => ({ data: n.data as { question: boolean; path: string }, actions: (n as unknown as { actions: { title: string }[] }).actions.map((a) => a.title) })),
        push.id,
      );
      return got.length === 1 && got[0]!.data.question && got[0];
    }, 10_000);
    // No answer actions: "Open" alone where the browser has room for it.
    expect(data.actions.filter((a) => a !== 'Open')).toEqual([]);
    // What the worker's click opens: the session's page with ?answer=1, where the answer box has the keyboard.
    await page.goto(new URL(`${data.data.path}?answer=1`, base).href);
    await page.getByTestId('answer-text').waitFor({ timeout: 15_000 });
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid')), { timeout: 10_000 }).toBe('answer-text');

    // Nobody answers and the agent moves on: the gateway's withdraw, as the push service delivered it,
    // replaces the question's notification (same tag) with what happened, in ntfy's words.
    const asked = (await shown()).find((n) => n.tag === push.id)!;
    await ok(p.dir, ['session', 'signal', id, 'busy'], { env: p.env });
    const withdraw = await waitFor('the withdraw is pushed', () => pushesFor(id).find((x) => x.type === 'withdraw' && x.wait === push.wait), 15_000);
    expect(withdraw.answered).toBeUndefined();
    const at = withdraw.ended?.at;
    expect(at).toMatch(/^\d\d:\d\d$/);
    await deliver(withdraw);
    const room = await page.evaluate(() => (Notification as unknown as { maxActions: number }).maxActions);
    await expect.poll(async () => (await shown()).filter((n) => n.tag === push.id).map((n) => `${n.title} | ${n.body} | ${n.actions.join(',')}`), { timeout: 10_000 }).toEqual([
      `${asked.title} | the agent moved on at ${at}: nothing to answer | ${room > 0 ? 'Open' : ''}`,
    ]);
  }, 60_000);
});
