import { readFileSync, writeFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProject } from '../src/store/trellis-home.js';
import { catalogProjects, startTestGateway, type TestGateway } from './helpers/gateway.js';
import { cleanupRepos, ok, ROOT, tempDir, testEnv } from './helpers/repo.js';
import { startServe, type ServeProcess } from './helpers/serve.js';
import { demoRepo } from './helpers/server.js';
import { killTmux, waitFor } from './helpers/sessions.js';

/**
 * hub.json `notify` targets against a real gateway following a real serve: a webhook (JSON), ntfy's
 * plain-text form and a command each get exactly one event per wait and its withdrawal when answered;
 * a target that never answers holds its own request open while the session moves on and the other
 * targets hear everything.
 */

interface Hit {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

let home: string;
let dir: string;
let serve: ServeProcess;
let gw: TestGateway;
let recorder: http.Server;
let hung: http.Server;
const hits: Hit[] = [];
const held: ServerResponse[] = [];
let outFile: string;

const listen = async (s: http.Server): Promise<string> => {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
};
const cli = (...args: string[]) => ok(dir, args, { env: { TRELLIS_HOME: home } });
const state = async (id: string) => JSON.parse(await cli('session', 'show', id, '--json')).state as string;
const webhook = () => hits.filter((h) => h.path === '/hook').map((h) => JSON.parse(h.body) as { type: string; session: { id: string } });
const commandEvents = () => {
  try {
    return readFileSync(outFile, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; session: { id: string } });
  } catch {
    return [];
  }
};
const brief = (es: { type: string; session: { id: string } }[]) => es.map((e) => `${e.type} ${e.session.id}`);

beforeAll(async () => {
  home = tempDir();
  dir = await demoRepo();
  outFile = join(tempDir(), 'events.jsonl');
  recorder = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      hits.push({ path: req.url ?? '', headers: req.headers, body });
      res.end('ok');
    });
  });
  // Reads the request, then never answers: a target that hangs.
  hung = http.createServer((req, res) => {
    req.resume();
    held.push(res);
  });
  const [rec, dead] = [await listen(recorder), await listen(hung)];
  const append = `let s='';process.stdin.on('data',d=>s+=d).on('end',()=>require('fs').appendFileSync(${JSON.stringify(outFile)},s))`;
  writeFileSync(
    join(home, 'hub.json'),
    JSON.stringify({
      notify: {
        debounceMs: 300,
        publicUrl: 'https://box.example.ts.net/',
        retry: { attempts: 2, baseMs: 50, timeoutMs: 120_000 },
        targets: [
          { type: 'webhook', url: `${dead}/never` },
          { type: 'webhook', url: `${rec}/hook` },
          { type: 'ntfy', url: `${rec}/ntfy` },
          { type: 'command', command: [process.execPath, '-e', append] },
        ],
      },
    }),
  );
  catalogProjects(home, [dir]);
  serve = await startServe(ROOT, dir, { ...testEnv(dir), TRELLIS_HOME: home });
  gw = await startTestGateway(home);
}, 60_000);

afterAll(async () => {
  for (const res of held) res.socket?.destroy();
  await gw?.close();
  await serve?.stop('SIGKILL');
  killTmux(home);
  recorder?.close();
  hung?.close();
  cleanupRepos();
});

describe('notify targets', () => {
  it('each target gets one event per wait and its withdrawal; a hung target slows neither the session nor the others', async () => {
    const first = (await cli('session', 'spawn', 'Bake the bread', '--harness', 'shell')).trim();
    await waitFor('the session runs', async () => (await state(first)) === 'running');
    // Its first list is the baseline (what waits then is not news): a wait from now on is.
    await waitFor('the notifier follows the project', () => gw.hub.state.notifier!.settled);
    await cli('session', 'signal', first, 'permission');

    await waitFor('the webhook hears the wait', () => webhook().length >= 1, 15_000);
    const [wait] = webhook() as unknown as Record<string, unknown>[];
    expect(wait).toEqual({
      type: 'wait',
      id: `${encodeProject(dir)}/${first}/awaiting:permission`,
      wait: expect.stringMatching(/^[\w-]{12}$/),
      // A shell's pane shows no dialog: a wait without fixed options.
      options: [],
      project: { id: encodeProject(dir), name: expect.any(String) },
      session: { id: first, title: 'Bake the bread' },
      waitsFor: 'permission',
      path: `/p/${encodeProject(dir)}/#/sessions/${first}`,
      url: `https://box.example.ts.net/p/${encodeProject(dir)}/#/sessions/${first}`,
      since: expect.any(String),
    });
    await waitFor('the command hears it', () => commandEvents().length >= 1, 15_000);
    const ntfy = await waitFor('ntfy hears it', () => hits.find((h) => h.path === '/ntfy'), 15_000);
    expect(ntfy.headers['content-type']).toMatch(/^text\/plain/);
    expect(ntfy.body).toBe('Bake the bread waits for permission');
    expect(ntfy.headers.click).toBe(wait!.url);
    expect(ntfy.headers.title).toMatch(/: an agent needs you$/);
    // The dead target has the same event, and has not answered it.
    await waitFor('the hung target holds the request', () => held.length >= 1, 15_000);

    // Answered while the hung target still holds its request: the session moves at once.
    await cli('session', 'signal', first, 'busy');
    expect(await state(first)).toBe('running');
    expect(held.length).toBe(1);
    await waitFor('the webhook hears the withdrawal', () => webhook().length >= 2, 15_000);

    // A second session's wait is the barrier: whatever came for the first would have arrived before it.
    const second = (await cli('session', 'spawn', 'Knead the dough', '--harness', 'shell')).trim();
    await waitFor('the second session runs', async () => (await state(second)) === 'running');
    await cli('session', 'signal', second, 'question');
    await waitFor('the webhook hears the second wait', () => webhook().length >= 3, 15_000);
    await waitFor('the command hears it all', () => commandEvents().length >= 3, 15_000);
    expect(brief(webhook())).toEqual([`wait ${first}`, `withdraw ${first}`, `wait ${second}`]);
    expect(brief(commandEvents())).toEqual([`wait ${first}`, `withdraw ${first}`, `wait ${second}`]);
    // ntfy's withdraw replaces the wait's notification (the same sequence id) with what happened: nobody answered it.
    await waitFor('ntfy hears the second wait', () => hits.filter((h) => h.path === '/ntfy').length >= 3, 15_000);
    const ntfys = hits.filter((h) => h.path === '/ntfy');
    expect(ntfys.map((h) => h.body)).toEqual(['Bake the bread waits for permission', expect.stringMatching(/^Bake the bread: the agent moved on at \d\d:\d\d: nothing to answer$/), 'Knead the dough waits for question']);
    expect(ntfys.map((h) => h.headers['x-sequence-id'])).toEqual([String(wait!.wait), String(wait!.wait), expect.not.stringMatching(String(wait!.wait))]);
    expect(ntfys[1]!.headers.title).toMatch(/: no longer waiting$/);
    // All along, the hung target held its first request: its later events wait behind it, nobody else's.
    expect(held.length).toBe(1);
  }, 120_000);
});
