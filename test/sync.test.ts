import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, fsck, git, ok, ROOT, run, tempDir, testEnv, trellis } from './helpers/repo.js';
import { serveDir } from './helpers/server.js';
import { scenarioKey } from '../src/events/index.js';
import { openProject } from '../src/store/compose/open-project.js';

afterAll(cleanupRepos);

const FIXTURE = join(ROOT, 'fixtures/events/threads.ndjson');

/** A bare remote and two clones of it, each with its own author name. */
function twoClones(): { remote: string; a: string; b: string } {
  const root = tempDir();
  const remote = join(root, 'remote.git');
  const a = join(root, 'a');
  const b = join(root, 'b');
  git(root, 'init', '-q', '--bare', '-b', 'main', remote);
  git(root, 'init', '-q', '-b', 'main', a);
  git(a, 'config', 'user.name', 'Ann');
  git(a, 'config', 'user.email', 'ann@example.com');
  git(a, 'commit', '-q', '--allow-empty', '-m', 'init');
  git(a, 'remote', 'add', 'origin', '../remote.git');
  git(a, 'push', '-q', 'origin', 'main');
  git(root, 'clone', '-q', remote, b);
  git(b, 'config', 'user.name', 'Bob');
  git(b, 'config', 'user.email', 'bob@example.com');
  return { remote, a, b };
}

const ids = async (dir: string): Promise<string[]> => (JSON.parse(await ok(dir, ['issues', '--json'])) as { id: string }[]).map((i) => i.id).sort();

/** Every thread's `issue show --json`, byte for byte, and the whole list. */
async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = { list: await ok(dir, ['issues', '--json']) };
  for (const id of await ids(dir)) out[id] = await ok(dir, ['issue', 'show', id, '--json']);
  return out;
}

const show = async (dir: string, id: string) => JSON.parse(await ok(dir, ['issue', 'show', id, '--json'])) as { status: string; replies: { body: string; resolved?: boolean }[] };

const storedEvent = (dir: string, id: string) => JSON.parse(git(dir, 'cat-file', '-p', `refs/trellis/issues/${id}:event.json`)) as Record<string, unknown>;

describe('trellis sync between two clones of one bare remote', () => {
  it('joins offline writes to one thread and to distinct threads; any order, any number of times, both clones show the same bytes; fsck clean', async () => {
    const { remote, a, b } = twoClones();
    const shared = (await ok(a, ['issue', 'open', 'shared thread', '--body', 'both write here'])).trim();
    await ok(a, ['issue', 'reply', shared, '--body', 'base reply']);
    await ok(a, ['issue', 'remark', shared, '--reading', 'r1', '--body', 'base remark']);
    expect(await ok(a, ['sync'])).toMatch(/0 adopted.*1 pushed/);
    expect(await ok(b, ['sync'])).toMatch(/1 adopted/);

    // Offline: a replies, resolves the remark and closes; b replies; each opens a thread of its own.
    await ok(a, ['issue', 'reply', shared, '--body', 'from a']);
    await ok(a, ['issue', 'resolve', shared, '2']);
    await ok(a, ['issue', 'close', shared]);
    const onlyA = (await ok(a, ['issue', 'open', 'only in a'])).trim();
    await ok(b, ['issue', 'reply', shared, '--body', 'from b']);
    const onlyB = (await ok(b, ['issue', 'open', 'only in b'])).trim();

    const summaryB = JSON.parse(await ok(b, ['sync', '--json']));
    expect(summaryB).toMatchObject({ remote: 'origin', adopted: [], merged: [] });
    const summaryA = JSON.parse(await ok(a, ['sync', '--json']));
    expect(summaryA.merged).toEqual([`refs/trellis/issues/${shared}`]);
    expect(summaryA.adopted).toEqual([`refs/trellis/issues/${onlyB}`]);
    for (const dir of [b, a, b, a]) await ok(dir, ['sync']);

    const inA = await snapshot(a);
    expect(await snapshot(b)).toEqual(inA);
    expect(Object.keys(inA).sort()).toEqual(['list', onlyA, onlyB, shared].sort());
    const thread = await show(a, shared);
    expect(thread.status).toBe('landed');
    expect(thread.replies.map((r) => r.body).sort()).toEqual(['base remark', 'base reply', 'from a', 'from b']);
    expect(thread.replies.find((r) => r.body === 'base remark')!.resolved).toBe(true);
    // The merge commit joins both histories; the remote holds it too.
    const tip = git(a, 'rev-parse', `refs/trellis/issues/${shared}`).trim();
    expect(git(b, 'rev-parse', `refs/trellis/issues/${shared}`).trim()).toBe(tip);
    expect(git(remote, 'rev-parse', `refs/trellis/issues/${shared}`).trim()).toBe(tip);
    expect(git(a, 'rev-list', '--merges', '--count', tip).trim()).toBe('1');

    // More writes after the merge, then syncs in the other order: still one answer.
    await ok(b, ['issue', 'unresolve', shared, '2']);
    await ok(a, ['issue', 'reply', onlyB, '--body', 'a answers b']);
    for (const dir of [a, b, a, b]) await ok(dir, ['sync']);
    const again = await snapshot(a);
    expect(await snapshot(b)).toEqual(again);
    expect((await show(a, shared)).replies.find((r) => r.body === 'base remark')!.resolved).toBe(false);
    expect((await show(b, onlyB)).replies.map((r) => r.body)).toEqual(['a answers b']);
    // A sync with nothing new changes nothing and pushes nothing.
    expect(JSON.parse(await ok(a, ['sync', '--json']))).toMatchObject({ adopted: [], fastForwarded: [], merged: [], pushed: [] });

    for (const dir of [a, b, remote]) expect(fsck(dir)).toBe('');
  });

  it('a plain `git push` of refs/trellis/* by one clone is joined correctly by the next trellis sync of the other', async () => {
    const { a, b } = twoClones();
    const id = (await ok(a, ['issue', 'open', 'pushed by hand'])).trim();
    await ok(a, ['sync']);
    await ok(b, ['sync']);
    await ok(a, ['issue', 'reply', id, '--body', 'a by hand']);
    git(a, 'push', '-q', 'origin', 'refs/trellis/*:refs/trellis/*');
    await ok(b, ['issue', 'reply', id, '--body', 'b offline']);
    expect(JSON.parse(await ok(b, ['sync', '--json'])).merged).toEqual([`refs/trellis/issues/${id}`]);
    await ok(a, ['sync']);
    expect(await snapshot(a)).toEqual(await snapshot(b));
    expect((await show(a, id)).replies.map((r) => r.body).sort()).toEqual(['a by hand', 'b offline']);
  });

  it('--fetch-only pushes nothing, --push-only fetches nothing and reports a remote that moved; a missing remote says how to add one', async () => {
    const { remote, a, b } = twoClones();
    const id = (await ok(a, ['issue', 'open', 'modes'])).trim();
    expect(JSON.parse(await ok(a, ['sync', '--fetch-only', '--json'])).pushed).toEqual([]);
    expect(git(remote, 'for-each-ref', 'refs/trellis/')).toBe('');
    expect(JSON.parse(await ok(a, ['sync', '--push-only', '--json'])).pushed).toEqual([`refs/trellis/issues/${id}`]);
    await ok(b, ['sync']);
    await ok(b, ['issue', 'reply', id, '--body', 'b']);
    await ok(b, ['sync']);
    await ok(a, ['issue', 'reply', id, '--body', 'a']);
    const refused = await trellis(a, ['sync', '--push-only']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/moved.*trellis sync origin/);
    const noRemote = await trellis(a, ['sync', 'upstream']);
    expect(noRemote.code).toBe(1);
    expect(noRemote.stderr).toMatch(/no git remote 'upstream'; add one with 'git remote add upstream/);
    const both = await trellis(a, ['sync', '--push-only', '--fetch-only']);
    expect(both.code).toBe(2);
  });

  it('eval readings travel and merge the same way (the one stream store, another kind); WIP refs stay home', async () => {
    const { remote, a, b } = twoClones();
    const measure = async (dir: string, id: string, at: string) =>
      openProject(dir).evals.write(scenarioKey('ops/counts'), {
        type: 'measure',
        by: dir === a ? 'Ann' : 'Bob',
        at,
        reading: { id, scenario: 'ops/counts', scope: 'trunk', commit: null, outcome: 'pass', durationMs: 5, output: null },
      });
    await measure(a, 'r-base', '2026-03-01T10:00:00.000Z');
    git(a, 'update-ref', 'refs/trellis/wip/s1', git(a, 'rev-parse', 'HEAD').trim());
    await ok(a, ['sync']);
    await ok(b, ['sync']);
    // Both clones file a reading at clock 2, offline.
    await measure(b, 'r-b', '2026-03-01T10:00:02.000Z');
    await measure(a, 'r-a', '2026-03-01T10:00:01.000Z');
    await ok(b, ['sync']);
    expect(JSON.parse(await ok(a, ['sync', '--json'])).merged).toEqual([`refs/trellis/evals/${scenarioKey('ops/counts')}`]);
    await ok(b, ['sync']);
    for (const dir of [a, b]) {
      const state = await openProject(dir).evals.get(scenarioKey('ops/counts'));
      expect(state.readings.map((r) => r.id)).toEqual(['r-base', 'r-a', 'r-b']);
    }
    expect(git(remote, 'for-each-ref', '--format=%(refname)', 'refs/trellis/')).toBe(`refs/trellis/evals/${scenarioKey('ops/counts')}\n`);
    for (const dir of [a, b, remote]) expect(fsck(dir)).toBe('');
  });

  it('a first sync adopting many threads at once (one packed-refs write) shows the same list as the remote clone', async () => {
    const { a, b } = twoClones();
    const lines = Array.from({ length: 40 }, (_, i) => {
      const event = { v: 2, id: `ev${i}`, type: 'opened', at: new Date(Date.UTC(2026, 2, 1, 0, i)).toISOString(), by: 'gen', clock: 1, data: { concern: `thread ${i}`, body: '', nodes: [] } };
      return JSON.stringify({ stream: `bulk${i}`, event });
    });
    await ok(a, ['issues', 'import', '-'], { input: `${lines.join('\n')}\n` });
    await ok(a, ['sync']);
    await ok(b, ['issue', 'open', 'already here']);
    const summary = JSON.parse(await ok(b, ['sync', '--json']));
    expect(summary.adopted).toHaveLength(40);
    // The fetch wrote the commit-graph of the threads it brought (cold reads walk it).
    expect(existsSync(join(b, '.git/objects/info/commit-graphs/commit-graph-chain')) || existsSync(join(b, '.git/objects/info/commit-graph'))).toBe(true);
    expect(await ok(b, ['issues', 'export'])).toContain('"stream":"bulk39"');
    await ok(a, ['sync']);
    expect(await ok(b, ['issues', '--json'])).toBe(await ok(a, ['issues', '--json']));
    expect(await ok(b, ['issues', 'export'])).toBe(await ok(a, ['issues', 'export']));
    expect(fsck(b)).toBe('');
  });

  it('4 processes replying while sync merges: every acknowledged reply is there afterwards, on both clones', async () => {
    const { a, b } = twoClones();
    const id = (await ok(a, ['issue', 'open', 'busy thread'])).trim();
    await ok(a, ['sync']);
    await ok(b, ['sync']);
    const worker = (tag: string) => run(process.execPath, [join(ROOT, 'test/helpers/reply-worker.mjs'), a, tag, '25', id], { cwd: a, env: testEnv(a) });
    let done = false;
    const workers = Promise.all([0, 1, 2, 3].map((w) => worker(`w${w}`))).finally(() => (done = true));
    // Meanwhile b keeps writing and pushing, so every sync in a has a merge to make under the writers.
    let rounds = 0;
    let merges = 0;
    while (!done || rounds < 2) {
      await ok(b, ['issue', 'reply', id, '--body', `b-${rounds}`]);
      await ok(b, ['sync']);
      merges += JSON.parse(await ok(a, ['sync', '--json'])).merged.length;
      rounds++;
    }
    for (const r of await workers) expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    for (const dir of [a, b, a]) await ok(dir, ['sync']);
    expect(merges).toBeGreaterThan(0);
    const expected = [...[0, 1, 2, 3].flatMap((w) => Array.from({ length: 25 }, (_, i) => `w${w}-${i}`)), ...Array.from({ length: rounds }, (_, i) => `b-${i}`)].sort();
    for (const dir of [a, b]) expect((await show(dir, id)).replies.map((r) => r.body).sort()).toEqual(expected);
    expect(await snapshot(a)).toEqual(await snapshot(b));
    for (const dir of [a, b]) expect(fsck(dir)).toBe('');
  });

  it('a running serve sees the changes a sync brings on its next read and emits on the stream', async () => {
    const { a, b } = twoClones();
    const id = (await ok(a, ['issue', 'open', 'watched'])).trim();
    await ok(a, ['sync']);
    await ok(b, ['sync']);
    const api = await serveDir(a);
    const es = new EventSource(new URL('/api/graph/stream', api.url).href);
    const events: { type: string; cause?: string }[] = [];
    es.addEventListener('ready', () => events.push({ type: 'ready' }));
    es.addEventListener('graph', (e) => events.push({ type: 'graph', cause: JSON.parse(e.data).cause }));
    const until = async (pred: () => boolean, what: string) => {
      const deadline = Date.now() + 10_000;
      while (!pred()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    try {
      await until(() => events.some((e) => e.type === 'ready'), 'the stream to be ready');
      // Warm the server's read, so a stale cache would show.
      expect((await (await api.get(`/api/issues/${id}`)).json()).replies).toEqual([]);
      await ok(b, ['issue', 'reply', id, '--body', 'from the other clone']);
      const other = (await ok(b, ['issue', 'open', 'new elsewhere'])).trim();
      await ok(b, ['sync']);
      await ok(a, ['sync']);
      await until(() => events.some((e) => e.type === 'graph' && e.cause === 'issues'), 'a graph event after the sync');
      expect((await (await api.get(`/api/issues/${id}`)).json()).replies.map((r: { body: string }) => r.body)).toEqual(['from the other clone']);
      const list = (await (await api.get('/api/issues')).json()) as { issues?: { id: string }[] } | { id: string }[];
      expect(JSON.stringify(list)).toContain(other);

      // POST /api/sync runs the same verb in the server.
      await ok(b, ['issue', 'reply', id, '--body', 'second from b']);
      await ok(b, ['sync']);
      const post = (body: string) => api.get('/api/sync', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const synced = await post('{}');
      expect(synced.status).toBe(200);
      expect(await synced.json()).toMatchObject({ remote: 'origin', fastForwarded: [`refs/trellis/issues/${id}`] });
      expect((await (await api.get(`/api/issues/${id}`)).json()).replies).toHaveLength(2);
      const unknownRemote = await post('{"remote":"nope"}');
      expect({ status: unknownRemote.status, body: await unknownRemote.json() }).toMatchObject({ status: 404, body: { error: { code: 'NOT_FOUND' } } });
      const badMode = await post('{"mode":"sideways"}');
      expect({ status: badMode.status, body: await badMode.json() }).toMatchObject({ status: 400, body: { error: { code: 'INVALID_INPUT' } } });
      git(a, 'remote', 'add', 'gone', join(a, 'no-such-remote.git'));
      const unreachable = await post('{"remote":"gone"}');
      expect({ status: unreachable.status, body: await unreachable.json() }).toMatchObject({ status: 502, body: { error: { code: 'REMOTE_FAILED' } } });
      // A remote that asks for a password: the server has no terminal, so git must not wait for one.
      const locked = createServer((_req, res) => res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="locked"' }).end());
      await new Promise<void>((r) => locked.listen(0, '127.0.0.1', r));
      try {
        git(a, 'remote', 'add', 'locked', `http://127.0.0.1:${(locked.address() as AddressInfo).port}/repo.git`);
        const refused = await post('{"remote":"locked"}');
        const body = await refused.json();
        expect({ status: refused.status, code: body.error.code }).toEqual({ status: 502, code: 'REMOTE_FAILED' });
        expect(body.error.message).toContain('terminal prompts disabled');
      } finally {
        locked.close();
      }
    } finally {
      es.close();
      await api.close();
    }
  });
});

describe('event format v2 over a v1 repository', () => {
  it('the v1 fixtures read identically; new writes are v2; resolve by position works on v1 and v2 replies', async () => {
    const { a } = twoClones();
    await ok(a, ['issues', 'import', FIXTURE]);
    const expected = JSON.parse(readFileSync(join(ROOT, 'fixtures/events/threads.expected.json'), 'utf8'));
    expect(JSON.parse(await ok(a, ['issues', '--json']))).toEqual(expected.issues);
    expect(storedEvent(a, 'k3v9x2m4p7qa')).toMatchObject({ v: 1 });

    // Position 2 of the v1 thread is the v1 remark written at clock 3: stored as its id.
    await ok(a, ['issue', 'unresolve', 'k3v9x2m4p7qa', '2']);
    expect(storedEvent(a, 'k3v9x2m4p7qa')).toMatchObject({ v: 2, type: 'unresolved', id: expect.stringMatching(/^[0-9a-z]{12}$/), data: { reply: 'v1-3' } });
    expect((await show(a, 'k3v9x2m4p7qa')).replies[1]!.resolved).toBe(false);
    await ok(a, ['issue', 'remark', 'k3v9x2m4p7qa', '--reading', 'r9', '--body', 'a v2 remark']);
    const remark = storedEvent(a, 'k3v9x2m4p7qa');
    expect(remark).toMatchObject({ v: 2, type: 'remarked' });
    const n = (await show(a, 'k3v9x2m4p7qa')).replies.length;
    await ok(a, ['issue', 'resolve', 'k3v9x2m4p7qa', String(n)]);
    expect(storedEvent(a, 'k3v9x2m4p7qa')).toMatchObject({ v: 2, type: 'resolved', data: { reply: remark.id } });
    expect((await show(a, 'k3v9x2m4p7qa')).replies[n - 1]).toMatchObject({ body: 'a v2 remark', resolved: true });
    expect(fsck(a)).toBe('');
  });
});

describe('trellis issues export / import', () => {
  it('a recorded log round-trips byte for byte; export → import into an empty repository gives the same list; twice adds nothing', async () => {
    const { a, b } = twoClones();
    expect(await ok(a, ['issues', 'import', FIXTURE])).toBe('imported 12 new events into 4 threads from 12 lines\n');
    expect(await ok(a, ['issues', 'export', '--all'])).toBe(readFileSync(FIXTURE, 'utf8'));
    const id = (await ok(a, ['issue', 'open', 'v2 thread', '--body', 'b'])).trim();
    await ok(a, ['issue', 'reply', id, '--body', 'r']);
    const file = join(tempDir(), 'threads.ndjson');
    writeFileSync(file, await ok(a, ['issues', 'export']));
    // The default export leaves eval-remark threads out (they are no issue); --all has them.
    expect(readFileSync(file, 'utf8')).not.toContain('e5q1z8h3j0vd');

    expect(await ok(b, ['issues', 'import', file])).toMatch(/^imported 13 new events into 4 threads/);
    expect(await ok(b, ['issues', '--json'])).toBe(await ok(a, ['issues', '--json']));
    expect(await ok(b, ['issues', 'import', '-'], { input: readFileSync(file, 'utf8') })).toMatch(/^imported 0 new events into 0 threads/);
    const refs = git(b, 'for-each-ref', 'refs/trellis/');
    expect(await ok(b, ['issues', 'import', file])).toMatch(/^imported 0 new/);
    expect(git(b, 'for-each-ref', 'refs/trellis/')).toBe(refs);
    expect(await ok(b, ['issues', 'export'])).toBe(readFileSync(file, 'utf8'));
    expect(fsck(b)).toBe('');
  });

  it('a truncated file or a bad line is refused with its line number, and nothing is written', async () => {
    const { a, b } = twoClones();
    await ok(a, ['issues', 'import', FIXTURE]);
    const text = await ok(a, ['issues', 'export', '--all']);
    const dir = tempDir();
    const truncated = join(dir, 'truncated.ndjson');
    writeFileSync(truncated, text.slice(0, text.length - 40));
    const r = await trellis(b, ['issues', 'import', truncated]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^trellis: line 12 is not JSON .*truncated; nothing was imported\n$/);
    expect(git(b, 'for-each-ref', 'refs/trellis/')).toBe('');

    const lines = text.split('\n');
    lines[4] = lines[4]!.replace('"clock":1', '"clock":0');
    const bad = join(dir, 'bad.ndjson');
    writeFileSync(bad, lines.join('\n'));
    const r2 = await trellis(b, ['issues', 'import', bad]);
    expect(r2.code).toBe(1);
    expect(r2.stderr).toMatch(/line 5: the event has no valid "clock"/);
    expect(git(b, 'for-each-ref', 'refs/trellis/')).toBe('');

    const missing = await trellis(b, ['issues', 'import', join(dir, 'absent.ndjson')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot read .*absent\.ndjson: ENOENT/);
  });
});
