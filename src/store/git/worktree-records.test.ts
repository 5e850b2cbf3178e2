import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, git, tempDir, tempRepo } from '../../../test/helpers/repo.js';
import { parsePorcelain, readWorktreeRecords } from './worktree-records.js';

afterAll(cleanupRepos);

/** What git itself lists, run where `cwd` is. */
const listed = (cwd: string) => parsePorcelain(git(cwd, 'worktree', 'list', '--porcelain'));

describe('readWorktreeRecords: the worktrees read from the git dir, as `git worktree list --porcelain` reports them', () => {
  it('a table of real repositories: branches, detached, locked (with and without a reason, quoted), prunable, symbolic, packed, unborn, skipped admin folders', () => {
    const rows: [string, string, string][] = [];
    const compare = (name: string, cwd: string, gitdir: string) => {
      const ours = readWorktreeRecords(gitdir);
      expect(ours, name).toEqual(listed(cwd));
      rows.push([name, cwd, gitdir]);
    };
    // A repository with no commit yet: main on an unborn branch (HEAD all zeros, the branch line kept).
    const unborn = tempRepo({ commit: false });
    compare('unborn main', unborn, join(unborn, '.git'));

    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    const base = tempDir();
    // Made out of path order: git lists the linked ones sorted by path.
    git(dir, 'worktree', 'add', '-q', '-b', 'zeta', join(base, 'z-wt'));
    git(dir, 'worktree', 'add', '-q', '--detach', join(base, 'a-wt'));
    git(dir, 'worktree', 'add', '-q', '-b', 'locked-why', join(base, 'm-locked'));
    git(dir, 'worktree', 'lock', '--reason', 'on a "usb" disk\tnamed déjà', join(base, 'm-locked'));
    git(dir, 'worktree', 'add', '-q', '-b', 'locked-bare', join(base, 'n-locked'));
    git(dir, 'worktree', 'lock', join(base, 'n-locked'));
    git(dir, 'worktree', 'add', '-q', '-b', 'gone', join(base, 'p-gone'));
    rmSync(join(base, 'p-gone'), { recursive: true, force: true });
    // Locked and missing: locked wins, as git prune would keep it.
    git(dir, 'worktree', 'add', '-q', '-b', 'gone-locked', join(base, 'q-gone-locked'));
    git(dir, 'worktree', 'lock', join(base, 'q-gone-locked'));
    rmSync(join(base, 'q-gone-locked'), { recursive: true, force: true });
    // An admin folder with no gitdir file: git skips it.
    mkdirSync(join(gitdir, 'worktrees', 'half-made'));
    compare('branches, detached, locked, prunable', dir, gitdir);
    compare('the same, asked from a linked worktree', join(base, 'z-wt'), gitdir);

    // A branch whose tip is only in packed-refs, and one whose commit was moved after packing.
    git(dir, 'pack-refs', '--all');
    compare('packed refs', dir, gitdir);
    git(join(base, 'z-wt'), 'commit', '-q', '--allow-empty', '-m', 'after packing');
    compare('a loose ref over its packed line', dir, gitdir);

    // A worktree whose HEAD names a branch that is a symbolic ref; one on a branch deleted under it.
    git(dir, 'symbolic-ref', 'refs/heads/alias', 'refs/heads/zeta');
    writeFileSync(join(gitdir, 'worktrees', 'a-wt', 'HEAD'), 'ref: refs/heads/alias\n');
    git(dir, 'update-ref', '-d', 'refs/heads/locked-bare');
    compare('a symbolic branch, a deleted branch', dir, gitdir);

    // A worktree moved by hand (its gitdir file names where it was): prunable.
    renameSync(join(base, 'z-wt'), join(base, 'z-moved'));
    compare('moved by hand', dir, gitdir);
    expect(rows.length).toBe(7);
  });

  it('a bare main with linked worktrees: `bare`, no HEAD line', () => {
    const src = tempRepo();
    const bareDir = join(tempDir(), 'project.git');
    git(src, 'clone', '-q', '--bare', src, bareDir);
    git(bareDir, 'worktree', 'add', '-q', join(bareDir, '..', 'work'), 'main');
    const ours = readWorktreeRecords(bareDir);
    expect(ours?.[0]?.bare).toBe(true);
    expect(ours).toEqual(listed(bareDir));
    expect(ours).toEqual(listed(join(bareDir, '..', 'work')));
  });

  it('leaves to git what it does not model: a config extension, a relative gitdir, a steering variable, garbage in HEAD', () => {
    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    git(dir, 'worktree', 'add', '-q', '-b', 'side', join(tempDir(), 'side'));
    expect(readWorktreeRecords(gitdir, { GIT_DIR: gitdir })).toBeUndefined();
    writeFileSync(join(gitdir, 'worktrees', 'side', 'HEAD'), 'not a ref\n');
    expect(readWorktreeRecords(gitdir)).toBeUndefined();
    writeFileSync(join(gitdir, 'worktrees', 'side', 'HEAD'), 'ref: refs/heads/side\n');
    writeFileSync(join(gitdir, 'worktrees', 'side', 'gitdir'), '../../side/.git\n');
    expect(readWorktreeRecords(gitdir)).toBeUndefined();
    git(dir, 'config', 'extensions.worktreeConfig', 'true');
    expect(readWorktreeRecords(gitdir)).toBeUndefined();
  });
});
