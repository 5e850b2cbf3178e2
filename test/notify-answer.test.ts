import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHubServer, type HubServer } from '../src/gateway/hub-server.js';
import { bindPublic } from '../src/http/bind.js';
import { hashPassword } from '../src/store/host/hub-config.js';
import { encodeProject } from '../src/store/trellis-home.js';
import { catalogProjects, jsonRequest, loginCookie, throwawayCert } from './helpers/gateway.js';
import { cleanupRepos, ok, ROOT, tempDir, testEnv } from './helpers/repo.js';
import { startServe, type ServeProcess } from './helpers/serve.js';
import { demoRepo } from './helpers/server.js';
import { killTmux, tmux, waitFor } from './helpers/sessions.js';
import { startNtfyService, type NtfyMessage, type NtfyService } from './ntfy/ntfy-service.js';
import { startPushService, type PushService } from './push/push-service.js';

/**
 * Answering a wait from its notification (issue 43) against a real gateway following a real serve: shell
 * sessions draw a selection dialog on their pane (the shape `session answer` reads) and wait on
 * permission. The ntfy stand-in receives the options as action buttons, each POSTing a single-use
 * answer link bound to one wait and one option; the table below uses them the wrong ways first, then
 * the right one, then again. A project login without shell receives no actions and is refused the
 * cookie route, as the door refuses it the answer route; an answer the dialog does not take leaves the
 * wait open and says why.
 */

interface Hit {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

const ADMIN_PW = 'hunter2 hunter2';
const DATA_PW = 'project only pw';
let home: string;
let dir: string;
let project: string;
let serve: ServeProcess;
let hub: HubServer;
/** The first test's session, answered and running again: the second makes it wait anew. */
let one: string;
let base: string;
let recorder: http.Server;
let pushService: PushService;
let ntfy: NtfyService;
const hits: Hit[] = [];

const cli = (...args: string[]) => ok(dir, args, { env: { TRELLIS_HOME: home } });
const show = async (id: string) => JSON.parse(await cli('session', 'show', id, '--json')) as { state: string; reason: string | null };
const ntfyFor = (id: string) => ntfy.messages.filter((m) => m.topic === 'topic' && String(m.click).endsWith(`/sessions/${id}`) && / waits for /.test(m.message));
/** What the phone subscribed to the topic shows for a wait now: its sequence's latest message. */
const ntfyShows = (wait: NtfyMessage) => ntfy.shown('topic').find((m) => m.sequenceId === wait.sequenceId)!;
const hooksAt = (path: string, id: string) =>
  hits.filter((h) => h.path === path).map((h) => JSON.parse(h.body) as { type: string; wait: string; session: { id: string }; options?: { name: string; answer?: string }[] }).filter((e) => e.session.id === id);
/** The `http` actions of an ntfy message: label → URL. */
const ntfyActions = (h: NtfyMessage): Record<string, string> =>
  Object.fromEntries(
    [...String(h.actions ?? '').matchAll(/http, "([^"]+)", (\S+), method=POST, clear=true/g)].map((m) => [m[1]!, m[2]!]),
  );
const post = (url: string, init: { cookie?: string; body?: unknown } = {}) =>
  jsonRequest(base, new URL(url).pathname, { method: 'POST', ...(init.body !== undefined ? { body: init.body } : {}), headers: { ...(init.cookie ? { cookie: init.cookie } : {}) } });

/** Draws Claude Code's permission dialog shape on a shell session's pane. */
async function showDialog(id: string): Promise<void> {
  tmux(home, 'send-keys', '-t', `=${id}:`, "clear; printf ' Do you want to proceed?\\n \\342\\235\\257 1. Yes\\n   2. No\\n'", 'Enter');
  await waitFor('the dialog on the pane', () => /❯ 1\. Yes\n\s+2\. No/.test(tmux(home, 'capture-pane', '-p', '-t', `=${id}:`) ?? ''), 10_000);
}

async function spawn(title: string): Promise<string> {
  const id = (await cli('session', 'spawn', title, '--harness', 'shell')).trim();
  await waitFor('the session runs', async () => (await show(id)).state === 'running');
  return id;
}

beforeAll(async () => {
  home = tempDir();
  dir = await demoRepo();
  project = encodeProject(dir);
  recorder = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      hits.push({ path: req.url ?? '', headers: req.headers, body });
      res.end('ok');
    });
  });
  await new Promise<void>((r) => recorder.listen(0, '127.0.0.1', r));
  const rec = `http://127.0.0.1:${(recorder.address() as AddressInfo).port}`;
  ntfy = await startNtfyService();
  writeFileSync(
    join(home, 'hub.json'),
    JSON.stringify({
      adminPassword: await hashPassword(ADMIN_PW),
      gates: { [project]: { password: await hashPassword(DATA_PW) } },
      notify: {
        debounceMs: 200,
        targets: [
          { type: 'ntfy', url: `${ntfy.url}/topic` },
          { type: 'webhook', url: `${rec}/hook` },
          { type: 'webhook', url: `${rec}/bare`, answers: false },
        ],
      },
    }),
  );
  catalogProjects(home, [dir]);
  serve = await startServe(ROOT, dir, { ...testEnv(dir), TRELLIS_HOME: home });
  const tls = throwawayCert();
  pushService = await startPushService(tls);
  hub = createHubServer({ home, tls: false, pushAgent: new https.Agent({ ca: tls.cert }) });
  base = `http://127.0.0.1:${await bindPublic(hub.server, 0, '127.0.0.1')}/`;
}, 60_000);

afterAll(async () => {
  await hub?.close();
  await pushService?.close();
  recorder?.close();
  await ntfy?.close();
  await serve?.stop('SIGKILL');
  killTmux(home);
  cleanupRepos();
});

describe('answer links: single-use, bound to one wait and one option', () => {
  it('ntfy gets the options as action buttons; each use other than the right one, once, is refused saying what happened', async () => {
    one = await spawn('Bake one');
    const two = await spawn('Bake two');
    await waitFor('the notifier follows the project', () => hub.state.notifier!.settled);
    await showDialog(one);
    await showDialog(two);
    await cli('session', 'signal', one, 'permission');
    await cli('session', 'signal', two, 'permission');
    const [n1] = await waitFor('ntfy hears of wait one', () => ntfyFor(one).length && ntfyFor(one), 15_000);
    const [n2] = await waitFor('ntfy hears of wait two', () => ntfyFor(two).length && ntfyFor(two), 15_000);
    // Yes and No as http actions (cleared once tapped), then Open.
    expect(String(n1!.actions)).toMatch(/^http, "Yes", http:\/\/127\.0\.0\.1:\d+\/waits\/[\w-]+\/answer\/[\w-]{43}, method=POST, clear=true; http, "No", \S+, method=POST, clear=true; view, Open, http:\/\/\S+\/#\/sessions\//);
    const a1 = ntfyActions(n1!);
    const a2 = ntfyActions(n2!);
    expect(Object.keys(a1)).toEqual(['Yes', 'No']);
    // The webhook: the options by name with an answer URL each (tokens of its own); told not to, names alone.
    const [hook1] = await waitFor('the webhook hears of wait one', () => hooksAt('/hook', one).length && hooksAt('/hook', one), 15_000);
    expect(hook1!.options!.map((o) => o.name)).toEqual(['Yes', 'No']);
    // ntfy's sequence id is the wait's own id: what replaces this notification later names it.
    expect(n1!.sequenceId).toBe(hook1!.wait);
    expect(hook1!.options![0]!.answer).toMatch(new RegExp(`/waits/${hook1!.wait}/answer/[\\w-]{43}$`));
    expect(hook1!.options![0]!.answer).not.toBe(a1.Yes);
    const [bare1] = await waitFor('the bare webhook hears of wait one', () => hooksAt('/bare', one).length && hooksAt('/bare', one), 15_000);
    expect(bare1!.options).toEqual([{ name: 'Yes' }, { name: 'No' }]);

    // Wait two ends before anyone answers it (answered in the page, or the agent moved on).
    await cli('session', 'signal', two, 'busy');
    await waitFor('wait two is withdrawn', () => hooksAt('/hook', two).some((e) => e.type === 'withdraw'), 15_000);
    // Its ntfy notification is replaced (the same sequence id) by what happened: nobody answered it.
    await waitFor('ntfy replaces wait two', () => ntfyShows(n2!) !== n2, 15_000);
    expect(ntfyShows(n2!)).toMatchObject({ title: expect.stringMatching(/: no longer waiting$/), message: expect.stringMatching(/^Bake two: the agent moved on at \d\d:\d\d: nothing to answer$/) });
    expect(ntfyShows(n2!).actions).toBeUndefined();

    const w1 = hook1!.wait;
    const yes1 = a1.Yes!;
    const forged = yes1.replace(/[\w-]{43}$/, randomBytes(32).toString('base64url'));
    const table: [string, string, number, RegExp][] = [
      ['a forged token', forged, 403, /not one this gateway made/],
      ['a truncated token', yes1.slice(0, -1), 403, /cut short/],
      ["another wait's token", a2.Yes!.replace(/\/waits\/[\w-]+\//, `/waits/${w1}/`), 403, /another wait's/],
      ['a token after its wait ended', a2.Yes!, 410, /^this wait ended at \d\d:\d\d \(the agent moved on\): nothing was answered$/],
      ['the right one', yes1, 200, /^answered "Yes" from ntfy: the agent is working$/],
      ['the same POST again', yes1, 409, /^already answered: Yes, from ntfy at \d\d:\d\d$/],
      ['the other option of the same wait', a1.No!, 409, /^already answered: Yes, from ntfy/],
      ["the webhook's link for the same wait", hook1!.options![1]!.answer!, 409, /^already answered: Yes, from ntfy/],
    ];
    const seen: string[] = [];
    for (const [what, url, status, message] of table) {
      const r = await post(url);
      seen.push(`${what}: ${r.status} ${r.status === 200 ? r.body.message : r.body.error.message}`);
      expect.soft(r.status, what).toBe(status);
      expect.soft(r.status === 200 ? r.body.message : r.body.error.message, what).toMatch(message);
      // Nothing before the right one answered anything.
      if (status !== 200 && !seen.some((s) => s.startsWith('the right one'))) expect((await show(one)).state, what).toBe('awaiting');
    }
    expect((await show(one)).state).toBe('running');
    expect((await show(two)).state).toBe('running');
    // The phone's notification of wait one now says what happened, once; and the session records it, stamped.
    await waitFor('ntfy replaces wait one', () => ntfyShows(n1!) !== n1, 15_000);
    expect(ntfyShows(n1!)).toMatchObject({ title: expect.stringMatching(/: answered$/), message: expect.stringMatching(/^Bake one: answered: Yes, from ntfy at \d\d:\d\d$/) });
    expect(ntfy.shown('topic').filter((m) => m.sequenceId === n1!.sequenceId)).toHaveLength(1);
    expect(JSON.parse(await cli('session', 'show', one, '--json')).answered).toMatchObject({ option: 'Yes', via: 'ntfy' });
  }, 120_000);
});

describe('who receives actions: the route table’s shell scope', () => {
  it('a project login without shell gets no actions and is refused the answer; an answer the dialog did not take leaves the wait open; the admin answers once', async () => {
    const admin = await loginCookie(base, ADMIN_PW);
    const viewer = await loginCookie(base, DATA_PW, project);
    // A project login cannot subscribe (push is the admin's); were its device subscribed, its push has no actions.
    const refused = await jsonRequest(base, '/hub/push/subscriptions', { body: pushService.subscription('/viewer'), headers: { cookie: viewer } });
    expect(refused.status).toBe(403);
    expect((await jsonRequest(base, '/hub/push/subscriptions', { body: pushService.subscription('/admin'), headers: { cookie: admin } })).status).toBe(201);
    hub.state.notifier!.push.add(viewer.split('=')[1]!, pushService.subscription('/viewer'));

    const id = one;
    await showDialog(id);
    await cli('session', 'signal', id, 'permission');
    const pushes = await waitFor('both devices get the push', () => {
      const got = pushService.received.filter((r) => (r.payload as { session: { id: string } }).session.id === id);
      return got.length >= 2 && got;
    }, 15_000);
    type Payload = { wait: string; options: string[]; actions: { action: string; title: string }[] };
    const byPath = Object.fromEntries(pushes.map((p) => [p.path, p.payload as Payload]));
    expect(byPath['/admin']).toMatchObject({ options: ['Yes', 'No'], actions: [{ action: 'answer:0', title: 'Yes' }, { action: 'answer:1', title: 'No' }] });
    expect(byPath['/viewer']).toMatchObject({ options: [], actions: [] });
    const wait = byPath['/admin']!.wait;

    const byViewer = await post(new URL(`/waits/${wait}/answer`, base).href, { cookie: viewer, body: { option: 'Yes' } });
    expect(byViewer.status).toBe(403);
    expect(byViewer.body.error.message).toMatch(/answering a session's dialog runs commands as this machine's user: it needs the admin login, or a project password whose gate grants "shell"/);
    expect((await post(new URL(`/waits/${wait}/answer`, base).href, { body: { option: 'Yes' } })).status).toBe(401);
    const wrong = await post(new URL(`/waits/${wait}/answer`, base).href, { cookie: admin, body: { option: 'Maybe' } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.message).toMatch(/the dialog offers "Yes", "No"; "Maybe" is none of them/);
    // A shell's pane does not move the selection: "No" is never selected, nothing is confirmed, the wait stays open.
    const notTaken = await post(new URL(`/waits/${wait}/answer`, base).href, { cookie: admin, body: { option: 'No' } });
    expect(notTaken.status).toBe(409);
    expect(notTaken.body.error.message).toMatch(/^not answered: the selection did not reach "No".*; the wait is still open$/);
    expect((await show(id)).state).toBe('awaiting');
    const yes = await post(new URL(`/waits/${wait}/answer`, base).href, { cookie: admin, body: { option: 'Yes' } });
    expect(yes.status).toBe(200);
    expect(yes.body).toMatchObject({ wait, option: 'Yes', from: 'a notification', state: 'running', message: 'answered "Yes" from a notification: the agent is working' });
    const again = await post(new URL(`/waits/${wait}/answer`, base).href, { cookie: admin, body: { option: 'Yes' } });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toMatch(/^already answered: Yes, from a notification at \d\d:\d\d$/);
  }, 120_000);
});

describe('answered elsewhere: the session records who answered, and every late tap reads it', () => {
  it('answered in the page (through the door), a push action and an ntfy link are refused naming the option, "from the page" and the time; the ntfy notification says so; answered by the CLI, the same in its words', async () => {
    // The first test's session, answered twice already and running (the test budget holds two live sessions).
    const id = one;
    const admin = await loginCookie(base, ADMIN_PW);
    expect((await jsonRequest(base, '/hub/push/subscriptions', { body: pushService.subscription('/phone3'), headers: { cookie: admin } })).status).toBe(201);
    await showDialog(id);
    await cli('session', 'signal', id, 'permission');
    type Payload = { type: string; wait: string; options: string[]; session: { id: string } };
    const pushed = await waitFor('the push with its options', () => pushService.received.find((r) => r.path === '/phone3' && (r.payload as Payload).session.id === id && (r.payload as Payload).type === 'wait'), 15_000);
    const wait = (pushed.payload as Payload).wait;
    expect((pushed.payload as Payload).options).toEqual(['Yes', 'No']);
    const n3 = await waitFor('ntfy hears of this wait', () => ntfyFor(id).find((m) => m.sequenceId === wait), 15_000);
    const links = ntfyActions(n3);

    // The page answers through the door (the proxied answer route), its body claiming another author.
    const page = await jsonRequest(base, `/p/${project}/api/sessions/${id}/answer`, { body: { choice: 'Yes', by: 'mallory' }, headers: { cookie: admin } });
    expect(page.status).toBe(200);
    const fact = (await show(id)) as unknown as { answered: { option: string; by: string; via: string; at: string } };
    // Who acted is the door's stamp (the admin login: the hub's owner), never the body's `by`.
    expect(fact.answered).toMatchObject({ option: 'Yes', via: 'the page' });
    expect(fact.answered.by).not.toBe('mallory');
    const at = new Date(fact.answered.at);
    const hhmm = `${String(at.getHours()).padStart(2, '0')}:${String(at.getMinutes()).padStart(2, '0')}`;
    const said = `already answered: Yes, from the page at ${hhmm}`;

    // At once (the gateway may not have seen the wait end yet) and after it has: the same refusal, nothing typed.
    const tapNow = await post(new URL(`/waits/${wait}/answer`, base).href, { cookie: admin, body: { option: 'No' } });
    expect([tapNow.status, tapNow.body.error?.message]).toEqual([409, said]);
    await waitFor('the wait is withdrawn', () => hub.state.notifier!.answers.get(wait)?.open === false, 15_000);
    await waitFor('ntfy replaces the wait', () => ntfyShows(n3) !== n3, 15_000);
    expect(ntfyShows(n3)).toMatchObject({ title: expect.stringMatching(/: answered$/), message: `Bake one: answered: Yes, from the page at ${hhmm}` });
    const pushAction = await post(new URL(`/waits/${wait}/answer`, base).href, { cookie: admin, body: { option: 'Yes' } });
    expect([pushAction.status, pushAction.body.error?.message]).toEqual([409, said]);
    const ntfyLink = await post(links.Yes!);
    expect([ntfyLink.status, ntfyLink.body.error?.message]).toEqual([409, said]);
    // The other devices' notifications are replaced by the withdraw, which carries the same fact.
    const withdraw = await waitFor('the withdraw is pushed', () => pushService.received.find((r) => r.path === '/phone3' && (r.payload as Payload).type === 'withdraw' && (r.payload as Payload).wait === wait), 15_000);
    expect((withdraw.payload as { answered: unknown }).answered).toEqual({ option: 'Yes', from: 'the page', at: hhmm });
    // The page's one answer is the only one recorded: the screen moved once.
    expect(JSON.parse(await cli('session', 'show', id, '--json')).answered).toEqual(fact.answered);

    // Answered by the CLI (`trellis session answer`): the same, in its own words.
    await showDialog(id);
    await cli('session', 'signal', id, 'permission');
    const next = await waitFor('the next wait is pushed', () => pushService.received.find((r) => r.path === '/phone3' && (r.payload as Payload).session.id === id && (r.payload as Payload).type === 'wait' && (r.payload as Payload).wait !== wait), 15_000);
    const wait2 = (next.payload as Payload).wait;
    const n4 = await waitFor('ntfy hears of the next wait', () => ntfyFor(id).find((m) => m.sequenceId === wait2), 15_000);
    await cli('session', 'answer', id, 'Yes');
    const byCli = (await show(id)) as unknown as { answered: { via: string; at: string } };
    expect(byCli.answered.via).toBe('the CLI');
    const at2 = new Date(byCli.answered.at);
    const hhmm2 = `${String(at2.getHours()).padStart(2, '0')}:${String(at2.getMinutes()).padStart(2, '0')}`;
    const late = await post(new URL(`/waits/${wait2}/answer`, base).href, { cookie: admin, body: { option: 'Yes' } });
    expect([late.status, late.body.error?.message]).toEqual([409, `already answered: Yes, from the CLI at ${hhmm2}`]);
    await waitFor('ntfy replaces the next wait', () => ntfyShows(n4) !== n4, 15_000);
    expect(ntfyShows(n4).message).toBe(`Bake one: answered: Yes, from the CLI at ${hhmm2}`);
  }, 120_000);
});
