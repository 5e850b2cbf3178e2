import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupRepos, tempRepo, testEnv } from './helpers/repo.js';
import { post, serveDir } from './helpers/server.js';
import { killTmux, waitFor } from './helpers/sessions.js';

// Issue 40, deliverable 3: a change event names the ids that moved, beside its cause, causes and freshness.
let dir: string;
let home: string;
let api: Awaited<ReturnType<typeof serveDir>>;
const savedHome = process.env.TRELLIS_HOME;

const savedResync = process.env.TRELLIS_RESYNC_MS;

beforeAll(async () => {
  dir = tempRepo();
  home = testEnv(dir).TRELLIS_HOME!;
  process.env.TRELLIS_HOME = home;
  // No timed resync: the tests below count board rebuilds, and call the resync themselves.
  process.env.TRELLIS_RESYNC_MS = String(3_600_000);
  api = await serveDir(dir);
});
afterAll(async () => {
  await api.close();
  killTmux(home);
  if (savedHome === undefined) delete process.env.TRELLIS_HOME;
  else process.env.TRELLIS_HOME = savedHome;
  if (savedResync === undefined) delete process.env.TRELLIS_RESYNC_MS;
  else process.env.TRELLIS_RESYNC_MS = savedResync;
  cleanupRepos();
});

interface Change {
  cause: string;
  causes: string[];
  freshness: unknown;
  moved?: { issues?: string[]; sessions?: string[]; evals?: string[] };
}

describe('GET /api/graph/stream names what moved', () => {
  it("the event after a reply names the thread's id; after a hook event from loopback, the session's", async () => {
    const opened = await api.get('/api/issues', post({ concern: 'moved ids', body: 'first' }));
    expect(opened.status).toBe(201);
    const thread = ((await opened.json()) as { id: string }).id;
    const spawned = await api.get('/api/sessions', post({ task: 'moved', harness: 'shell' }));
    expect(spawned.status).toBe(201);
    const session = ((await spawned.json()) as { id: string }).id;

    const es = new EventSource(new URL('/api/graph/stream', api.url).href);
    const events: Change[] = [];
    let ready = false;
    es.addEventListener('ready', () => (ready = true));
    es.addEventListener('graph', (e: MessageEvent) => events.push(JSON.parse(e.data)));
    try {
      await waitFor('the stream to be ready', () => ready);
      let from = events.length;
      expect((await api.get(`/api/issues/${thread}/reply`, post({ body: 'a reply' }))).status).toBe(200);
      await waitFor('an issues event', () => events.slice(from).some((e) => e.causes.includes('issues')));
      const afterReply = events.slice(from).find((e) => e.causes.includes('issues'))!;
      // The spec's fields stay (the spawn's own events may settle into the same one); the ids ride beside them.
      expect(afterReply).toMatchObject({ cause: expect.any(String), causes: expect.arrayContaining(['issues']), freshness: expect.any(Object) });
      expect(afterReply.moved?.issues).toEqual([thread]);

      from = events.length;
      const signalled = await api.get(`/api/sessions/${session}/signal/permission`, post({}));
      expect(signalled.status).toBe(200);
      await waitFor('a sessions event', () => events.slice(from).some((e) => e.causes.includes('sessions')));
      const afterHook = events.slice(from).find((e) => e.causes.includes('sessions'))!;
      expect(afterHook.moved?.sessions).toEqual([session]);
      expect(afterHook.moved?.issues).toBeUndefined();
    } finally {
      es.close();
      await api.get(`/api/sessions/${session}/close`, post({}));
    }
  }, 60_000);

  it('a reply is announced once: the next resync does not announce it again (every open page would read everything)', async () => {
    const opened = await api.get('/api/issues', post({ concern: 'announced once', body: 'first' }));
    const thread = ((await opened.json()) as { id: string }).id;
    const es = new EventSource(new URL('/api/graph/stream', api.url).href);
    const events: Change[] = [];
    let ready = false;
    es.addEventListener('ready', () => (ready = true));
    es.addEventListener('graph', (e: MessageEvent) => events.push(JSON.parse(e.data)));
    const replied = async (body: string) => {
      const from = events.length;
      expect((await api.get(`/api/issues/${thread}/reply`, post({ body }))).status).toBe(200);
      await waitFor('the reply announced', () => events.slice(from).some((e) => e.moved?.issues?.includes(thread)));
    };
    try {
      await waitFor('the stream to be ready', () => ready);
      await replied('one');
      const from = events.length;
      // What the resync timer does, now rather than in ten seconds: a rebuild compared with the last board announced.
      const rebuilds = api.live.stats.rebuilds;
      api.live.changed('resync');
      await waitFor('the resync to rebuild the board', () => api.live.stats.rebuilds > rebuilds);
      // The next reply's event follows whatever the resync said on the one stream.
      await replied('two');
      expect(events.slice(from).map((e) => e.causes)).toEqual([['issues']]);
    } finally {
      es.close();
    }
  }, 30_000);

  it('an agent event is announced without a board rebuild to compare (before: one per event)', async () => {
    const spawned = await api.get('/api/sessions', post({ task: 'rebuilds', harness: 'shell' }));
    const session = ((await spawned.json()) as { id: string }).id;
    // The spawn's worktree pool refills in the background (worktree changes rebuild the board to compare).
    await waitFor('the worktree pool to refill', async () => {
      const pool = ((await (await api.get('/api/resources')).json()) as { sessions: { pool: { size: number; ready: number } } }).sessions.pool;
      return pool.ready >= pool.size;
    });
    await waitFor('no stream open', () => !api.live.listening());
    // A change of another kind settled into the same announcement (a late worktree event of the pool's
    // refill) rightly rebuilds the board to compare: only an announcement whose causes are the session's
    // alone is judged, and the signal is sent again (permission, then busy, …) until one is that alone.
    const judged: { causes: string[]; rebuilt: number }[] = [];
    for (let attempt = 0; attempt < 6 && !judged.some((j) => j.causes.join() === 'sessions'); attempt++) {
      const before = api.live.stats.rebuilds;
      // Read as the event is said (the bus calls its listeners as it emits).
      let seen: { causes: string[]; rebuilt: number } | undefined;
      const note = (c: { moved: { sessions?: string[] }; json: string }) => {
        if (seen || !c.moved.sessions?.includes(session)) return;
        seen = { causes: (JSON.parse(c.json) as { causes: string[] }).causes, rebuilt: api.live.stats.rebuilds - before };
      };
      api.live.bus.on('change', note);
      try {
        expect((await api.get(`/api/sessions/${session}/signal/${attempt % 2 ? 'busy' : 'permission'}`, post({}))).status).toBe(200);
        await waitFor('the event announced', () => seen !== undefined);
        judged.push(seen!);
      } finally {
        api.live.bus.off('change', note);
      }
    }
    await api.get(`/api/sessions/${session}/close`, post({}));
    const alone = judged.filter((j) => j.causes.join() === 'sessions');
    expect(alone.length, JSON.stringify(judged)).toBeGreaterThan(0);
    expect(alone.map((j) => j.rebuilt), JSON.stringify(judged)).toEqual(alone.map(() => 0));
  }, 60_000);
});
