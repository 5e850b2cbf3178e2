import { execFileSync } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, git, tempRepo } from '../../../test/helpers/repo.js';
import { commitObject, objectId, singleFileTree, writeObject, writeObjects } from './loose-objects.js';

afterAll(cleanupRepos);

describe('loose objects', () => {
  it('are byte-identical to what git writes for the same content', () => {
    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    writeFileSync(join(dir, 'f'), 'hello\n');
    const blob = writeObject(gitdir, 'blob', Buffer.from('hello\n'));
    expect(blob).toBe(git(dir, 'hash-object', 'f').trim());
    const tree = writeObject(gitdir, 'tree', singleFileTree('event.json', blob));
    expect(execFileSync('git', ['mktree'], { cwd: dir, input: `100644 blob ${blob}\tevent.json\n`, encoding: 'utf8' }).trim()).toBe(tree);
    const at = new Date('2026-01-02T03:04:05Z');
    const commit = writeObject(gitdir, 'commit', commitObject(tree, null, { name: 'Ann <x>', email: '', at }, 'reply: hi'));
    const env = { ...process.env, GIT_AUTHOR_NAME: 'Ann x', GIT_AUTHOR_EMAIL: '', GIT_AUTHOR_DATE: '1767323045 +0000', GIT_COMMITTER_NAME: 'Ann x', GIT_COMMITTER_EMAIL: '', GIT_COMMITTER_DATE: '1767323045 +0000' };
    expect(execFileSync('git', ['commit-tree', tree, '-m', 'reply: hi'], { cwd: dir, env, encoding: 'utf8' }).trim()).toBe(commit);
    expect(execFileSync('git', ['fsck', '--strict', '--no-dangling'], { cwd: dir, encoding: 'utf8', stdio: 'pipe' })).toBe('');
  });

  it('in a batch: the ids git gives, each written once (a repeat in the batch, one already there), no temp file left', () => {
    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    const there = writeObject(gitdir, 'blob', Buffer.from('already\n'));
    const blob = { type: 'blob', content: Buffer.from('hello\n') } as const;
    const tree = { type: 'tree', content: singleFileTree('event.json', objectId(blob)) } as const;
    const commit = { type: 'commit', content: commitObject(objectId(tree), null, { name: 'Ann', email: '', at: new Date('2026-01-02T03:04:05Z') }, 'reply: hi') } as const;
    const oids = writeObjects(gitdir, [blob, tree, commit, blob, { type: 'blob', content: Buffer.from('already\n') }]);
    expect(oids).toEqual([objectId(blob), objectId(tree), objectId(commit), objectId(blob), there]);
    expect(git(dir, 'cat-file', '-p', oids[0]!)).toBe('hello\n');
    expect(git(dir, 'cat-file', '-t', oids[2]!).trim()).toBe('commit');
    for (const oid of new Set(oids)) expect(readdirSync(join(gitdir, 'objects', oid.slice(0, 2))).filter((f) => f.startsWith('tmp_obj_'))).toEqual([]);
    expect(execFileSync('git', ['fsck', '--strict', '--no-dangling'], { cwd: dir, encoding: 'utf8', stdio: 'pipe' })).toBe('');
  });

  it('leave no temp files behind, and git ignores a crashed writer’s tmp_obj_ leftover', () => {
    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    const oid = writeObject(gitdir, 'blob', Buffer.from('x'));
    expect(readdirSync(join(gitdir, 'objects', oid.slice(0, 2)))).toEqual([oid.slice(2)]);
    writeFileSync(join(gitdir, 'objects', oid.slice(0, 2), 'tmp_obj_deadbeef'), 'partial');
    expect(execFileSync('git', ['fsck', '--strict', '--no-dangling'], { cwd: dir, encoding: 'utf8', stdio: 'pipe' })).toBe('');
  });
});
