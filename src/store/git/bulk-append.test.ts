import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, fsck, git, tempRepo } from '../../../test/helpers/repo.js';
import { GitAppendLog } from './append-log.js';

afterAll(cleanupRepos);

const record = (n: number) => ({ bytes: Buffer.from(`{"n":${n}}`), subject: `event ${n}`, author: 'ann', at: new Date(Date.UTC(2026, 0, 1, 0, 0, n)) });

describe('bulkAppend: many logs in one pack and one ref update', () => {
  it('creates new refs (packed) and moves existing ones from their expected tips; git reads them as ours', async () => {
    const dir = tempRepo();
    const log = new GitAppendLog(join(dir, '.git'));
    const old = log.commit(null, [record(1)]);
    expect(await log.swap('refs/trellis/issues/old', null, old)).toBe(true);
    const written = await log.bulkAppend([
      { ref: 'refs/trellis/issues/old', expected: old, records: [record(2)] },
      { ref: 'refs/trellis/issues/new', expected: null, records: [record(3), record(4)] },
    ]);
    expect([...written!.keys()].sort()).toEqual(['refs/trellis/issues/new', 'refs/trellis/issues/old']);
    expect(log.tip('refs/trellis/issues/new')).toBe(written!.get('refs/trellis/issues/new'));
    expect(git(dir, 'log', '--format=%an|%s', 'refs/trellis/issues/old')).toBe('ann|event 2\nann|event 1\n');
    expect(git(dir, 'cat-file', '-p', 'refs/trellis/issues/new:event.json')).toBe('{"n":4}');
    expect(git(dir, 'ls-tree', '--name-only', 'refs/trellis/issues/new~1')).toBe('event.json\n');
    const [chain] = await log.read([{ tip: log.tip('refs/trellis/issues/new')!, stopAt: null }]);
    expect(chain!.ok && chain!.entries.map((e) => Buffer.from(e.bytes).toString())).toEqual(['{"n":3}', '{"n":4}']);
    expect(fsck(dir)).toBe('');
  });

  it('moves nothing it was not asked to: a stale expected tip refuses the batch; a ref that appeared is left as it is', async () => {
    const dir = tempRepo();
    const log = new GitAppendLog(join(dir, '.git'));
    const a = log.commit(null, [record(1)]);
    const b = log.commit(a, [record(2)]);
    await log.swap('refs/trellis/issues/moved', null, b);
    expect(await log.bulkAppend([{ ref: 'refs/trellis/issues/moved', expected: a, records: [record(9)] }])).toBeNull();
    expect(log.tip('refs/trellis/issues/moved')).toBe(b);
    // Planned as new, but another writer made it meanwhile: not written, not reported as written.
    const written = await log.bulkAppend([{ ref: 'refs/trellis/issues/moved', expected: null, records: [record(9)] }]);
    expect(written!.has('refs/trellis/issues/moved')).toBe(false);
    expect(log.tip('refs/trellis/issues/moved')).toBe(b);
  });
});
