import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, git, tempRepo } from '../../../test/helpers/repo.js';
import { GitAppendLog } from './append-log.js';
import { catFileChainReader } from './cat-file-chain-reader.js';
import type { ChainReader } from './chain.js';
import { isoChainReader } from './iso-chain-reader.js';
import { revListChainReader } from './rev-list-chain-reader.js';

afterAll(cleanupRepos);

const record = (n: number) => ({ bytes: Buffer.from(`{"n":${n}}`), subject: `event ${n}`, author: 'ann', at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)) });

/** One contract, run against every chain reader. */
function runChainReaderContract(name: string, make: (gitdir: string) => ChainReader) {
  describe(`chain reader contract: ${name}`, () => {
    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    const log = new GitAppendLog(gitdir);
    const c1 = log.commit(null, [record(1)]);
    const c3 = log.commit(c1, [record(2), record(3)]);
    const other = log.commit(null, [record(9)]);
    const text = (r: Awaited<ReturnType<ChainReader['read']>>[number]) => (r.ok ? r.entries.map((e) => Buffer.from(e.bytes).toString()) : r.reason);

    it('reads a chain from its root, oldest first', async () => {
      const [r] = await make(gitdir).read([{ tip: c3, stopAt: null }]);
      expect(text(r!)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
      expect(r).toMatchObject({ ok: true, reachedStop: false });
    });

    it('stops at a known commit', async () => {
      const [r] = await make(gitdir).read([{ tip: c3, stopAt: c1 }]);
      expect(text(r!)).toEqual(['{"n":2}', '{"n":3}']);
      expect(r).toMatchObject({ ok: true, reachedStop: true });
    });

    it('reads the whole chain when the known commit is not an ancestor (rewritten history)', async () => {
      const [r] = await make(gitdir).read([{ tip: c3, stopAt: other }]);
      expect(text(r!)).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
      expect(r).toMatchObject({ ok: true, reachedStop: false });
    });

    it('reads many chains at once, in request order', async () => {
      const results = await make(gitdir).read([
        { tip: other, stopAt: null },
        { tip: c1, stopAt: null },
        { tip: c3, stopAt: c3 },
      ]);
      expect(results.map(text)).toEqual([['{"n":9}'], ['{"n":1}'], []]);
    });

    it('names the commit that has no payload', async () => {
      const empty = git(dir, 'commit-tree', '-m', 'no payload', git(dir, 'write-tree').trim()).trim();
      const [r] = await make(gitdir).read([{ tip: empty, stopAt: null }]);
      expect(r).toMatchObject({ ok: false, oid: empty, reason: expect.stringContaining('event.json') });
    });

    it('names a missing commit', async () => {
      const missing = 'f'.repeat(40);
      const [r] = await make(gitdir).read([{ tip: missing, stopAt: null }]);
      expect(r).toMatchObject({ ok: false, oid: missing });
    });

    it('walks both sides of a merge commit, each event once, and the merge adds none', async () => {
      const left = log.commit(c1, [record(4), record(5)]);
      const right = log.commit(c1, [record(6)]);
      const m = log.merge([left, right], { name: 'sync', at: new Date(Date.UTC(2026, 0, 2)) }, 'merge: sync');
      const [r] = await make(gitdir).read([{ tip: m, stopAt: null }]);
      expect(r!.ok && [...text(r!)].sort()).toEqual(['{"n":1}', '{"n":4}', '{"n":5}', '{"n":6}']);
      expect(r).toMatchObject({ ok: true, reachedStop: false });
    });

    it('reads a merged history from the root when the part after the known commit holds a merge', async () => {
      const left = log.commit(c1, [record(7)]);
      const right = log.commit(c1, [record(8)]);
      const m = log.merge([left, right], { name: 'sync', at: new Date(Date.UTC(2026, 0, 2)) }, 'merge: sync');
      const after = log.commit(m, [record(10)]);
      const [across, past] = await make(gitdir).read([
        { tip: m, stopAt: left },
        { tip: after, stopAt: m },
      ]);
      // Across the merge: everything, so the caller folds again in its own order.
      expect(across!.ok && [...text(across!)].sort()).toEqual(['{"n":1}', '{"n":7}', '{"n":8}']);
      expect(across).toMatchObject({ ok: true, reachedStop: false });
      // On top of the merge: only what is new.
      expect(text(past!)).toEqual(['{"n":10}']);
      expect(past).toMatchObject({ ok: true, reachedStop: true });
    });

    it('wrote objects git itself accepts', () => {
      expect(execFileSync('git', ['fsck', '--strict', '--no-dangling'], { cwd: dir, encoding: 'utf8', stdio: 'pipe' })).toBe('');
      expect(git(dir, 'cat-file', '-p', `${c3}:event.json`)).toBe('{"n":3}');
      expect(git(dir, 'log', '--format=%an|%s', c3)).toBe('ann|event 3\nann|event 2\nann|event 1\n');
    });
  });
}

runChainReaderContract('isomorphic-git', isoChainReader);
runChainReaderContract('git cat-file --batch', catFileChainReader);
runChainReaderContract('git rev-list + buffered cat-file', revListChainReader);

describe('bulk reads at once', () => {
  it('never report a healthy chain as broken when many run together (git may exit before its last answers are read)', async () => {
    const dir = tempRepo();
    const log = new GitAppendLog(join(dir, '.git'));
    const tips = Array.from({ length: 20 }, (_, t) => {
      let tip: string | null = null;
      for (let n = 0; n < 5; n++) tip = log.commit(tip, [record(t * 10 + n)]);
      return tip!;
    });
    const reads = await Promise.all(Array.from({ length: 8 }, () => revListChainReader(join(dir, '.git')).read(tips.map((tip) => ({ tip, stopAt: null })))));
    const broken = reads.flat().filter((r) => !r.ok);
    expect(broken).toEqual([]);
    expect(reads.flat().every((r) => r.ok && r.entries.length === 5)).toBe(true);
  });
});
