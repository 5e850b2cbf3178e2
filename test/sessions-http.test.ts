import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupRepos, ok, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { mergeByHand } from '../src/projections/merge-by-hand.js';
import { post, serveDir } from './helpers/server.js';
import { killTmux, tmux, tmuxHas, waitFor } from './helpers/sessions.js';

let dir: string;
let home: string;
let api: Awaited<ReturnType<typeof serveDir>>;
const savedHome = process.env.TRELLIS_HOME;

beforeAll(async () => {
  dir = tempRepo();
  home = testEnv(dir).TRELLIS_HOME!;
  // The in-process server's runtime reads TRELLIS_HOME from this process: the test's own tmux socket.
  process.env.TRELLIS_HOME = home;
  writeFileSync(join(dir, 'trellis.json'), JSON.stringify({ sessions: { max: 1, minFreeMb: 0 } }));
  api = await serveDir(dir);
});
afterAll(async () => {
  await api.close();
  killTmux(home);
  if (savedHome === undefined) delete process.env.TRELLIS_HOME;
  else process.env.TRELLIS_HOME = savedHome;
  cleanupRepos();
});

const json = async (r: Response) => ({ status: r.status, body: await r.json() });
const state = async (id: string) => (await json(await api.get(`/api/sessions/${id}`))).body;

describe('session routes', () => {
  it('bad input: unknown ids are 404, unknown harnesses and bodies 400, naming what is wrong', async () => {
    expect(await json(await api.get('/api/sessions/nosuch'))).toMatchObject({ status: 404, body: { error: { code: 'SESSION_NOT_FOUND' } } });
    expect(await json(await api.get('/api/sessions/nosuch/review'))).toMatchObject({ status: 404 });
    expect(await json(await api.get('/api/sessions/nosuch/close', post({})))).toMatchObject({ status: 404 });
    const harness = await json(await api.get('/api/sessions', post({ task: 'x', harness: 'vim' })));
    expect(harness).toMatchObject({ status: 400, body: { error: { code: 'UNKNOWN_HARNESS', message: expect.stringContaining('use one of shell') } } });
    expect(await json(await api.get('/api/sessions', post({ tsk: 'x' })))).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT' } } });
    expect(await json(await api.get('/api/sessions', post('{nope')))).toMatchObject({ status: 400 });
    expect((await json(await api.get('/api/sessions'))).body).toEqual({ sessions: [], problems: [] });
  });

  it('queue: with sessions.max 1, three spawns make one running and two queued; a slot freed by another process launches the next with no request', async () => {
    const spawn = async (task: string) => {
      const r = await json(await api.get('/api/sessions', post({ task, harness: 'shell' })));
      expect(r.status).toBe(201);
      return r.body;
    };
    const a = await spawn('first');
    const b = await spawn('second');
    const c = await spawn('third');
    expect([a.state, b.state, c.state]).toEqual(['running', 'queued', 'queued']);
    expect(tmuxHas(home, a.id)).toBe(true);
    expect(tmuxHas(home, b.id)).toBe(false);
    const resources = (await json(await api.get('/api/resources'))).body;
    expect(resources.sessions).toEqual({ running: 1, queued: 2, budget: 1, minFreeMb: 0, pool: { dir: expect.stringMatching(/\/\.pool$/), size: 2, ready: expect.any(Number), behind: expect.any(Number), other: expect.any(Number), bytes: expect.any(Number) } });
    expect(resources.cpus).toBeGreaterThan(0);
    const board = JSON.parse(await (await api.get('/api/graph')).text());
    expect(board.sessions.map((s: { id: string; state: string }) => [s.id, s.state]).sort()).toEqual(
      [[a.id, 'running'], [b.id, 'queued'], [c.id, 'queued']].sort(),
    );
    expect(board.sessions.find((s: { id: string }) => s.id === a.id)).toEqual({
      id: a.id, title: 'first', harness: 'shell', state: 'running', reason: null, detail: null, source: 'supervisor', unread: false, nodes: [], issue: null, branch: `trellis/${a.id}`, updatedAt: expect.any(String),
      // What confines it (issue 45): the board, the list and the inbox say it.
      confinement: { confined: true, by: expect.stringMatching(/^bubblewrap \d/) },
    });

    // The shell exits: tmux's pane-died hook signals from its own process; the server's queue launches b.
    const prompted = await json(await api.get(`/api/sessions/${a.id}/prompt`, post({ body: 'exit' })));
    expect(prompted).toMatchObject({ status: 200, body: { delivered: true } });
    await waitFor('a to be interrupted by its process exit', async () => (await state(a.id)).state === 'interrupted');
    expect(await state(a.id)).toMatchObject({ state: 'interrupted', reason: 'process-exit', source: 'process', unread: true });
    await waitFor('b to be launched by the server', async () => (await state(b.id)).state === 'running');
    expect((await state(c.id)).state).toBe('queued');

    // Refused transitions are 409s naming the state; a refused prompt is a 502.
    const merge = await json(await api.get(`/api/sessions/${b.id}/merge`, post({})));
    expect(merge).toMatchObject({ status: 409, body: { error: { code: 'SESSION_REFUSED', message: expect.stringContaining('the session is running') } } });
    expect(await json(await api.get(`/api/sessions/${c.id}/review`, post({})))).toMatchObject({ status: 409, body: { error: { message: expect.stringContaining('the session is queued') } } });

    // review → merge: a shell reads no prose, so nothing is typed into it; the 409 names the git commands
    // to run, and the session stays in review (not merging).
    expect(await json(await api.get(`/api/sessions/${b.id}/review`, post({})))).toMatchObject({ status: 200, body: { state: 'review' } });
    const shellMerge = await json(await api.get(`/api/sessions/${b.id}/merge`, post({})));
    expect(shellMerge).toMatchObject({ status: 409, body: { error: { code: 'SESSION_REFUSED', message: expect.stringContaining(`merge --no-ff --no-edit trellis/${b.id}`) } } });
    // The CLI's and the page's one text (projections/merge-by-hand.ts): the main checkout by its absolute path.
    expect(shellMerge.body.error.message).toContain(mergeByHand(dir, 'main', `trellis/${b.id}`).commands);
    expect(shellMerge.body.error.message).toContain('no agent that reads prose');
    expect(await state(b.id)).toMatchObject({ state: 'review', timeline: [] });
    expect(tmux(home, 'capture-pane', '-p', '-t', `=${b.id}:`)).not.toMatch(/Merge your branch|syntax error/);

    const closed = await json(await api.get(`/api/sessions/${b.id}/close`, post({})));
    expect(closed).toMatchObject({ status: 200, body: { state: 'closed' } });
    expect(await json(await api.get(`/api/sessions/${b.id}/close`, post({})))).toMatchObject({ status: 409, body: { error: { message: expect.stringContaining('the session is closed') } } });
    expect(await json(await api.get(`/api/sessions/${b.id}/prompt`, post({ body: 'hi' })))).toMatchObject({ status: 502, body: { error: { code: 'PROMPT_REFUSED' } } });
    await waitFor('c to be launched', async () => (await state(c.id)).state === 'running');

    // a resumes in its kept worktree.
    const resumed = await json(await api.get(`/api/sessions/${a.id}/resume`, post({})));
    expect(resumed).toMatchObject({ status: 200, body: { state: 'running' } });
    expect(tmuxHas(home, a.id)).toBe(true);
    for (const id of [a.id, c.id]) expect((await json(await api.get(`/api/sessions/${id}/close`, post({})))).status).toBe(200);
    expect((await json(await api.get('/api/sessions'))).body.sessions).toEqual([]);
    expect((await json(await api.get('/api/sessions?all'))).body.sessions).toHaveLength(3);
    // Each wait is a bounded poll on a real process (a shell exiting, tmux's hook starting a CLI): on a loaded machine these take seconds.
  }, 180_000);

  it('GET /api/graph/stream emits on a session transition written by another process', async () => {
    const spawned = await json(await api.get('/api/sessions', post({ task: 'streamed' })));
    const id = spawned.body.id;
    const es = new EventSource(new URL('/api/graph/stream', api.url).href);
    const causes: string[] = [];
    let ready = false;
    es.addEventListener('ready', () => (ready = true));
    es.addEventListener('graph', (e: MessageEvent) => causes.push(JSON.parse(e.data).cause));
    try {
      await waitFor('the stream to be ready', () => ready);
      await ok(dir, ['session', 'signal', id, 'permission']);
      await waitFor('a sessions event', () => causes.includes('sessions'));
      expect(await state(id)).toMatchObject({ state: 'awaiting', reason: 'permission', source: 'hook' });
      const before = causes.length;
      await ok(dir, ['session', 'view', id]);
      await waitFor('a second sessions event', () => causes.length > before);
    } finally {
      es.close();
      expect((await trellis(dir, ['session', 'close', id])).code).toBe(0);
    }
  });
});
