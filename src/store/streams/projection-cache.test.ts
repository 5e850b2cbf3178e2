import { appendFileSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ThreadCommand } from '../../events/index.js';
import { cleanupRepos, tempRepo } from '../../../test/helpers/repo.js';
import type { ThreadState } from '../../projections/thread.js';
import { GitAppendLog } from '../git/append-log.js';
import { ThreadStore } from '../issues/thread-store.js';
import { CACHE_FORMAT, ProjectionCache } from './projection-cache.js';

afterAll(cleanupRepos);

const at = () => new Date().toISOString();
const open = (concern: string): ThreadCommand => ({ type: 'open', concern, body: 'b'.repeat(200), nodes: [], by: 'ann', at: at() });
const reply = (body: string): ThreadCommand => ({ type: 'reply', body, evidence: [], by: 'bob', at: at() });

const cachePath = (dir: string) => join(dir, '.git/trellis/cache/issues.json');
const journalOf = (dir: string) => join(dir, '.git/trellis/cache', JSON.parse(readFileSync(cachePath(dir), 'utf8')).journal as string);
function storeOf(dir: string, log = new GitAppendLog(join(dir, '.git'))) {
  return new ThreadStore(log, new ProjectionCache<ThreadState>(cachePath(dir)));
}

/** Writes `n` threads straight through one store, then makes the cache whole with one full read. */
async function seeded(n: number) {
  const dir = tempRepo();
  const s = storeOf(dir);
  for (let i = 0; i < n; i++) await s.write(`t${i}`, open(`thread ${i}`));
  await storeOf(dir).all();
  return dir;
}

describe('the projection cache saves O(change)', () => {
  it('a write after a full read appends one line for its stream; the rest of the file is untouched', async () => {
    const dir = await seeded(300);
    const journal = journalOf(dir);
    const before = readFileSync(journal);
    expect(before.toString().trim().split('\n')).toHaveLength(300);

    const s = storeOf(dir);
    await s.all();
    await s.write('t7', reply('only this one'));
    const after = readFileSync(journal);
    // The old bytes are a prefix of the new ones, and what was added is one line, about one thread.
    expect(after.subarray(0, before.length).equals(before)).toBe(true);
    const added = after.subarray(before.length).toString();
    expect(added.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(added)).toMatchObject({ id: 't7', state: { replies: [{ body: 'only this one' }] } });
    expect(added.length).toBeLessThan((before.length / 300) * 3);
    // A fresh process reads the last line of t7 back.
    const again = (await storeOf(dir).all()).states.find((t) => t.id === 't7')!;
    expect(again.replies.map((r) => r.body)).toEqual(['only this one']);
  });

  it('a CLI-like write (no full read) starts from the cached fold and appends its line', async () => {
    const dir = await seeded(20);
    const journal = journalOf(dir);
    const size = statSync(journal).size;
    // A log whose chain reads would fail proves the write never read the chain through git.
    class NoReads extends GitAppendLog {
      override read(): never {
        throw new Error('read the chain instead of starting from the cache');
      }
    }
    const s = storeOf(dir, new NoReads(join(dir, '.git')));
    const { state } = await s.write('t3', reply('from the cache'));
    expect(state.replies.map((r) => r.body)).toEqual(['from the cache']);
    expect(statSync(journal).size).toBeGreaterThan(size);
    expect(await storeOf(dir, new NoReads(join(dir, '.git'))).get('t3')).toEqual(state);
  });

  it('compacts a journal with too much slack into one line per stream, and keeps every state', async () => {
    const dir = await seeded(5);
    const s = new ThreadStore(new GitAppendLog(join(dir, '.git')), new ProjectionCache<ThreadState>(cachePath(dir), 40));
    await s.all();
    const first = journalOf(dir);
    for (let i = 0; i < 49; i++) await s.write(`t${i % 5}`, reply(`r${i}`));
    // 5 + 49 lines: over 2 × 5 + 40, so the last save rewrote it.
    const compacted = journalOf(dir);
    expect(compacted).not.toBe(first);
    expect(readFileSync(compacted, 'utf8').trim().split('\n').length).toBeLessThan(10);
    expect(readdirSync(join(dir, '.git/trellis/cache')).filter((f) => f.endsWith('.ndjson'))).toEqual([compacted.split('/').pop()]);
    await s.write('t0', reply('last'));
    const t0 = (await storeOf(dir).all()).states.find((t) => t.id === 't0')!;
    expect(t0.replies.at(-1)!.body).toBe('last');
    expect(t0.replies).toHaveLength(11);
  });

  it('a torn line is a miss, never an error; a header of another format is rebuilt', async () => {
    const dir = await seeded(3);
    appendFileSync(journalOf(dir), '{"id":"t1","tip":"');
    const s = storeOf(dir);
    expect((await s.all()).states.map((t) => t.id).sort()).toEqual(['t0', 't1', 't2']);
    writeFileSync(cachePath(dir), JSON.stringify({ format: CACHE_FORMAT, journal: '../../../../etc/passwd' }));
    expect((await storeOf(dir).all()).states).toHaveLength(3);
    expect(JSON.parse(readFileSync(cachePath(dir), 'utf8'))).toMatchObject({ format: CACHE_FORMAT, journal: expect.stringMatching(/^issues\..*\.ndjson$/) });
  });
});
