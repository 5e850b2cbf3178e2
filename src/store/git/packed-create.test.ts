import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, fsck, git, tempRepo } from '../../../test/helpers/repo.js';
import { createPackedRefs } from './packed-create.js';

afterAll(cleanupRepos);

describe('createPackedRefs', () => {
  it('adds refs to packed-refs and keeps every other ref byte for byte (a branch named in UTF-8 included)', () => {
    const dir = tempRepo();
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    git(dir, 'branch', 'thé-vert');
    git(dir, 'tag', '-a', 'v1', '-m', 'annotated: a peeled line follows it');
    git(dir, 'pack-refs', '--all');
    const before = readFileSync(join(dir, '.git', 'packed-refs'));

    expect(createPackedRefs(join(dir, '.git'), new Map([['refs/trellis/issues/a1', head], ['refs/trellis/issues/b2', head]]))).toBe(true);

    const after = readFileSync(join(dir, '.git', 'packed-refs'));
    // Every line that was there is still there, in bytes: nothing re-encoded.
    for (const line of before.toString('latin1').split('\n').filter((l) => l && !l.startsWith('#'))) expect(after.toString('latin1')).toContain(line);
    expect(git(dir, 'rev-parse', 'refs/heads/thé-vert').trim()).toBe(head);
    expect(git(dir, 'for-each-ref', '--format=%(refname)', 'refs/trellis/issues/')).toBe('refs/trellis/issues/a1\nrefs/trellis/issues/b2\n');
    expect(git(dir, 'rev-parse', 'v1^{commit}').trim()).toBe(head);
    fsck(dir);
  });

  it('refuses the whole batch when one of the refs exists already, and leaves packed-refs and no lock behind', () => {
    const dir = tempRepo();
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    git(dir, 'update-ref', 'refs/trellis/issues/taken', head);
    expect(createPackedRefs(join(dir, '.git'), new Map([['refs/trellis/issues/new', head], ['refs/trellis/issues/taken', head]]))).toBe(false);
    expect(git(dir, 'for-each-ref', '--format=%(refname)', 'refs/trellis/issues/')).toBe('refs/trellis/issues/taken\n');
    expect(() => readFileSync(join(dir, '.git', 'packed-refs.lock'))).toThrow(/ENOENT/);
  });
});
