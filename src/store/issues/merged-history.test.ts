import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ThreadCommand } from '../../events/index.js';
import { cleanupRepos, tempRepo } from '../../../test/helpers/repo.js';
import { GitAppendLog } from '../git/append-log.js';
import { compareAndSwapRef, defaultLockOptions } from '../git/ref-lock.js';
import { ProjectionCache } from '../streams/projection-cache.js';
import { ThreadStore, threadRef } from './thread-store.js';

afterAll(cleanupRepos);

let tick = 0;
const at = () => new Date(Date.UTC(2026, 2, 1, 9, 0, 0, tick++)).toISOString();
const cmd = (c: object, by = 'ann') => ({ by, at: at(), ...c }) as ThreadCommand;

function store(dir: string) {
  const log = new GitAppendLog(join(dir, '.git'));
  return { log, s: new ThreadStore(log, new ProjectionCache(join(dir, '.git/trellis/cache/issues.json'))) };
}

/**
 * One thread written on "two clones" (two branches of its ref in one repository), then joined by a
 * merge commit the way sync joins them: the fold reads both sides, orders by (clock, at, id), and every
 * reader (incremental or cold, any process) gets the same state.
 */
describe('a thread whose history is a merge of two clones', () => {
  it('folds both sides in (clock, at, id) order, each event once, the same warm and cold', async () => {
    const dir = tempRepo();
    const { log, s } = store(dir);
    await s.write('t1', cmd({ type: 'open', concern: 'c', body: '', nodes: [] }));
    await s.write('t1', cmd({ type: 'remark', body: 'base remark', reading: 'r', evidence: [] }));
    const base = log.tip(threadRef('t1'))!;
    // Side A: a reply and a resolve of the base remark (by position, stored by id).
    await s.write('t1', cmd({ type: 'reply', body: 'A1', evidence: [] }));
    await s.write('t1', cmd({ type: 'resolve', reply: 1 }));
    const sideA = log.tip(threadRef('t1'))!;
    const warm = await s.get('t1');
    expect(warm.replies.map((r) => r.body)).toEqual(['base remark', 'A1']);
    // Side B, written elsewhere on the same base: a reply and a close.
    const { s: other } = store(dir);
    await compareAndSwapRef(join(dir, '.git'), threadRef('t1'), sideA, base, defaultLockOptions());
    await other.write('t1', cmd({ type: 'reply', body: 'B1', evidence: [] }, 'bob'));
    await other.write('t1', cmd({ type: 'close' }, 'bob'));
    const sideB = log.tip(threadRef('t1'))!;
    const merge = log.merge([sideB, sideA], { name: 'sync', at: new Date() }, 'merge: sync');
    expect(await log.swap(threadRef('t1'), sideB, merge)).toBe(true);

    // The store that folded side A incrementally sees a merge: it folds again from the root.
    const afterMerge = await s.get('t1');
    const cold = await store(dir).s.get('t1');
    expect(afterMerge).toEqual(cold);
    // Clocks 3 and 3 (A1, B1) sort by `at`: A1 was written first.
    expect(cold.replies.map((r) => [r.body, r.resolved])).toEqual([
      ['base remark', true],
      ['A1', undefined],
      ['B1', undefined],
    ]);
    expect(cold.status).toBe('landed');
    expect(cold.clock).toBe(4);

    // A write on top of the merge continues from the largest clock of both sides and folds incrementally.
    const { state } = await s.write('t1', cmd({ type: 'unresolve', reply: 1 }));
    expect(state.clock).toBe(5);
    expect(state.replies[0]!.resolved).toBe(false);
    expect(await store(dir).s.get('t1')).toEqual(state);
    // Merging a side again that is already in the history adds nothing.
    const again = log.merge([log.tip(threadRef('t1'))!, sideA], { name: 'sync', at: new Date() }, 'merge: sync');
    expect(await log.swap(threadRef('t1'), log.tip(threadRef('t1')), again)).toBe(true);
    expect(await store(dir).s.get('t1')).toEqual({ ...state });
  });

  it('a bulk read of many streams gives merged ones the same fold as a single read', async () => {
    const dir = tempRepo();
    const { log, s } = store(dir);
    for (let i = 0; i < 12; i++) await s.write(`t${i}`, cmd({ type: 'open', concern: `c${i}`, body: '', nodes: [] }));
    const base = log.tip(threadRef('t3'))!;
    await s.write('t3', cmd({ type: 'reply', body: 'A', evidence: [] }));
    const a = log.tip(threadRef('t3'))!;
    await compareAndSwapRef(join(dir, '.git'), threadRef('t3'), a, base, defaultLockOptions());
    await s.write('t3', cmd({ type: 'reply', body: 'B', evidence: [] }));
    const b = log.tip(threadRef('t3'))!;
    await log.swap(threadRef('t3'), b, log.merge([b, a], { name: 'sync', at: new Date() }, 'merge'));
    const { states, problems } = await store(dir).s.all();
    expect(problems).toEqual([]);
    expect(states.find((t) => t.id === 't3')!.replies.map((r) => r.body)).toEqual(['A', 'B']);
    expect(await store(dir).s.get('t3')).toEqual(states.find((t) => t.id === 't3'));
  });
});
