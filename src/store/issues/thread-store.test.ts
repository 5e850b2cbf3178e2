import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ThreadCommand } from '../../events/index.js';
import { cleanupRepos, git, tempRepo } from '../../../test/helpers/repo.js';
import { GitAppendLog } from '../git/append-log.js';
import { CACHE_FORMAT, ProjectionCache } from '../streams/projection-cache.js';
import { ThreadStore, threadRef } from './thread-store.js';

afterAll(cleanupRepos);

const at = () => new Date().toISOString();
const open = (concern: string): ThreadCommand => ({ type: 'open', concern, body: '', nodes: [], by: 'ann', at: at() });
const reply = (body: string): ThreadCommand => ({ type: 'reply', body, evidence: [], by: 'bob', at: at() });

function store(dir: string, log = new GitAppendLog(join(dir, '.git'))) {
  return new ThreadStore(log, new ProjectionCache(join(dir, '.git/trellis/cache/issues.json')));
}

describe('ThreadStore', () => {
  it('writes one commit per event and reads the thread back', async () => {
    const dir = tempRepo();
    const s = store(dir);
    await s.write('t1', open('first'));
    await s.write('t1', reply('one'));
    const { state } = await s.write('t1', { type: 'close', by: 'ann', at: at() });
    expect(state).toMatchObject({ status: 'landed', clock: 3, replies: [{ body: 'one' }] });
    expect(git(dir, 'log', '--format=%s', threadRef('t1'))).toBe('close: landed\nreply: one\nopen: first\n');
    expect(await store(dir).get('t1')).toEqual(state);
  });

  /** A store whose first compare-and-swap is beaten by `rival` writing `command` to t1 just before it. */
  async function racedStore(dir: string, command: ThreadCommand) {
    const rival = store(dir);
    await rival.write('t1', open('race'));
    const race = { happened: false };
    class RacedLog extends GitAppendLog {
      override async swap(ref: string, expected: string | null, next: string) {
        if (!race.happened) {
          race.happened = true;
          await rival.write('t1', command);
        }
        return super.swap(ref, expected, next);
      }
    }
    return { s: store(dir, new RacedLog(join(dir, '.git'))), race };
  }

  it('re-decides after losing a compare-and-swap: a close raced by another close is refused', async () => {
    const dir = tempRepo();
    const { s, race } = await racedStore(dir, { type: 'close', by: 'rival', at: at() });
    await expect(s.write('t1', { type: 'close', by: 'ann', at: at() })).rejects.toMatchObject({ code: 'THREAD_NOT_OPEN' });
    expect(race.happened).toBe(true);
    expect(git(dir, 'log', '--format=%an %s', threadRef('t1'))).toBe('rival close: landed\nann open: race\n');
  });

  it('a reply raced by another reply is retried on top of it', async () => {
    const dir = tempRepo();
    const { s, race } = await racedStore(dir, reply('rival'));
    const { state } = await s.write('t1', reply('mine'));
    expect(race.happened).toBe(true);
    expect(state.replies.map((r) => r.body)).toEqual(['rival', 'mine']);
    expect(state.clock).toBe(3);
  });

  /**
   * A store that loses every compare-and-swap it tries to a rival writing `rivalCommand(n)` to t1 just
   * before it (a slow process among fast ones); `lost()` counts the races.
   */
  async function alwaysBeaten(dir: string, rivalCommand: (n: number) => ThreadCommand) {
    const rival = store(dir);
    await rival.write('t1', open('hot thread'));
    let lost = 0;
    class AlwaysBeaten extends GitAppendLog {
      override async swap(ref: string, expected: string | null, next: string) {
        await rival.write('t1', rivalCommand(++lost));
        return super.swap(ref, expected, next);
      }
    }
    return { s: store(dir, new AlwaysBeaten(join(dir, '.git'))), rival, lost: () => lost };
  }

  it('a writer that loses every race is never starved: it takes the ref lock and lands on top of them all', async () => {
    const dir = tempRepo();
    const beaten = await alwaysBeaten(dir, (n) => reply(`rival ${n}`));
    const { state } = await beaten.s.write('t1', reply('mine'));
    const lost = beaten.lost();
    expect(lost).toBeGreaterThan(0);
    const rivals = Array.from({ length: lost }, (_, i) => `rival ${i + 1}`);
    expect(state.replies.map((r) => r.body)).toEqual([...rivals, 'mine']);
    expect(git(dir, 'rev-list', '--count', threadRef('t1')).trim()).toBe(String(lost + 2));
    expect(git(dir, 'rev-list', '--merges', '--count', threadRef('t1')).trim()).toBe('0');
    expect((await store(dir).get('t1')).replies.map((r) => r.body)).toEqual([...rivals, 'mine']);
  });

  it('a refused command under the ref lock releases the lock and moves nothing', async () => {
    const dir = tempRepo();
    // The rival's last win closes the thread, so the locked attempt must refuse the close.
    const { s, rival } = await alwaysBeaten(dir, (n) => (n < 3 ? reply(`rival ${n}`) : { type: 'close', by: 'rival', at: at() }));
    await expect(s.write('t1', { type: 'close', by: 'ann', at: at() })).rejects.toMatchObject({ code: 'THREAD_NOT_OPEN' });
    const tip = git(dir, 'rev-parse', threadRef('t1')).trim();
    // No lock left behind: a plain append still lands.
    await rival.write('t1', reply('after'));
    expect(git(dir, 'rev-parse', `${threadRef('t1')}~1`).trim()).toBe(tip);
  });

  it('lists every thread and never serves a stale cache: other processes, hand edits, fetches', async () => {
    const dir = tempRepo();
    const a = store(dir);
    await a.write('t1', open('one'));
    await a.write('t2', open('two'));
    expect((await a.all()).states.map((t) => t.concern).sort()).toEqual(['one', 'two']);

    // another writer (another store = another process's view) appends
    await store(dir).write('t1', reply('from elsewhere'));
    expect((await a.all()).states.find((t) => t.id === 't1')!.replies).toHaveLength(1);

    // a hand edit moves the ref back
    const first = git(dir, 'rev-list', '--max-parents=0', threadRef('t1')).trim();
    git(dir, 'update-ref', threadRef('t1'), first);
    expect((await a.all()).states.find((t) => t.id === 't1')!.replies).toHaveLength(0);

    // a fresh process with only the on-disk cache sees the hand edit too
    expect((await store(dir).all()).states.find((t) => t.id === 't1')!.replies).toHaveLength(0);

    // a thread deleted by hand disappears
    git(dir, 'update-ref', '-d', threadRef('t2'));
    expect((await a.all()).states.map((t) => t.id)).toEqual(['t1']);

    // threads arriving by git fetch from a clone appear
    const clone = join(dir, '..', `${dir.split('/').pop()}-clone`);
    git(dir, 'clone', '-q', dir, clone);
    git(clone, 'fetch', '-q', dir, 'refs/trellis/*:refs/trellis/*');
    await store(clone).write('t9', open('from the clone'));
    git(dir, 'fetch', '-q', clone, 'refs/trellis/*:refs/trellis/*');
    expect((await a.all()).states.map((t) => t.id).sort()).toEqual(['t1', 't9']);
    execFileSync('rm', ['-rf', clone]);
  });

  it('rebuilds a cache of an older format or one that does not parse', async () => {
    const dir = tempRepo();
    await store(dir).write('t1', open('one'));
    const path = join(dir, '.git/trellis/cache/issues.json');
    await store(dir).all();
    const tip = git(dir, 'rev-parse', threadRef('t1')).trim();
    // a cache claiming the right tip but in an old format must not be believed
    writeFileSync(path, JSON.stringify({ format: CACHE_FORMAT - 1, threads: { t1: { tip, state: { id: 't1', concern: 'LIE' } } } }));
    expect((await store(dir).all()).states[0]!.concern).toBe('one');
    expect(JSON.parse(readFileSync(path, 'utf8')).format).toBe(CACHE_FORMAT);
    writeFileSync(path, '{"format":1,"thr');
    expect((await store(dir).all()).states[0]!.concern).toBe('one');
  });

  it('reports a thread whose event.json is corrupt by name; the others still list', async () => {
    const dir = tempRepo();
    const s = store(dir);
    await s.write('good', open('fine'));
    await s.write('bad', open('soon broken'));
    const blob = execFileSync('git', ['hash-object', '-w', '--stdin'], { cwd: dir, input: '{"v":1,"type":"replied",', encoding: 'utf8' }).trim();
    const tree = execFileSync('git', ['mktree'], { cwd: dir, input: `100644 blob ${blob}\tevent.json\n`, encoding: 'utf8' }).trim();
    const commit = git(dir, 'commit-tree', tree, '-p', threadRef('bad'), '-m', 'reply: garbage').trim();
    git(dir, 'update-ref', threadRef('bad'), commit);

    const { states: threads, problems } = await store(dir).all();
    expect(threads.map((t) => t.id)).toEqual(['good']);
    expect(problems).toEqual([{ id: 'bad', ref: threadRef('bad'), commit, reason: expect.stringMatching(/^event\.json is not JSON/) }]);
    await expect(store(dir).write('bad', reply('x'))).rejects.toMatchObject({ code: 'CORRUPT_EVENT', message: expect.stringContaining(commit) });
  });

  it('reads many threads from their roots through one bulk read', async () => {
    const dir = tempRepo();
    const s = store(dir);
    for (let i = 0; i < 30; i++) {
      await s.write(`t${i}`, open(`thread ${i}`));
      await s.write(`t${i}`, reply(`reply ${i}`));
    }
    const { states: threads, problems } = await store(dir).all();
    expect(problems).toEqual([]);
    expect(threads).toHaveLength(30);
    expect(threads.every((t) => t.replies.length === 1 && t.replies[0]!.body === `reply ${t.id.slice(1)}`)).toBe(true);
  });
});

describe('ThreadStore.all({ only })', () => {
  it('reads every tip the first time, then only the named threads’ refs', async () => {
    const dir = tempRepo();
    const writer = store(dir);
    await writer.write('a', open('a'));
    await writer.write('b', open('b'));
    const reader = store(dir);
    expect((await reader.all({ only: new Set() })).states.map((t) => t.id).sort()).toEqual(['a', 'b']);
    await writer.write('a', reply('to a'));
    await writer.write('b', reply('to b'));
    await writer.write('c', open('c'));
    const partial = await reader.all({ only: new Set(['a', 'c']) });
    const replies = (id: string) => partial.states.find((t) => t.id === id)?.replies.length;
    expect([replies('a'), replies('b'), replies('c')]).toEqual([1, 0, 0]);
    git(dir, 'update-ref', '-d', threadRef('c'));
    expect((await reader.all({ only: new Set(['c']) })).states.map((t) => t.id).sort()).toEqual(['a', 'b']);
    expect((await reader.all()).states.find((t) => t.id === 'b')!.replies).toHaveLength(1);
  });
});
