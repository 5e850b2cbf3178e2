import { appendFileSync, chmodSync, mkdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, git, tempDir, tempRepo } from '../../../test/helpers/repo.js';
import { listWorktrees, overlayEntry, worktreeOverlay } from '../spec/worktrees.js';
import { untouchedSince } from './untouched-subtree.js';

afterAll(cleanupRepos);

/** What the board's two git listings print for `specs` in worktree `wt` since `base`. */
const listedByGit = (wt: string, base: string) =>
  git(wt, 'diff', '--name-status', '--no-renames', base, '--', 'specs') + git(wt, 'ls-files', '--others', '--exclude-standard', '--', 'specs');

/**
 * Files checked out in the same clock tick as the index is written are "racily clean" to git (and so to
 * this reader); a worktree made long ago is not. Back-date the files and let git record their stat again.
 */
function settle(wt: string, files: readonly string[]): void {
  const past = new Date(Date.now() - 3600_000);
  for (const f of files) utimesSync(join(wt, f), past, past);
  git(wt, 'update-index', '-q', '--refresh');
}

describe('untouchedSince: a worktree with nothing under a folder since HEAD, read from its index and the disk', () => {
  it('a table of real repositories: true only where git lists nothing, and the board overlay the same as through git', async () => {
    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    mkdirSync(join(dir, 'specs', 'api'), { recursive: true });
    writeFileSync(join(dir, 'specs', 'index.md'), '# Root\n');
    writeFileSync(join(dir, 'specs', 'api', 'auth.md'), '# Auth\n');
    writeFileSync(join(dir, 'README.md'), 'readme\n');
    git(dir, 'add', '-A');
    git(dir, 'commit', '-q', '-m', 'specs');
    const head = git(dir, 'rev-parse', 'HEAD').trim();
    const tracked = ['specs/index.md', 'specs/api/auth.md', 'README.md'];
    const base = tempDir();
    let n = 0;
    const fresh = () => {
      const wt = join(base, `wt${n++}`);
      git(dir, 'worktree', 'add', '-q', '--detach', wt, 'main');
      settle(wt, tracked);
      return wt;
    };
    const rows: [string, string, true | undefined][] = [];
    const row = (name: string, wt: string, expected: true | undefined) => {
      const ours = untouchedSince(wt, gitdir, head, 'specs');
      const listed = listedByGit(wt, head);
      // Sound: never true where git lists something.
      if (ours) expect(listed, name).toBe('');
      expect(ours, `${name} (git lists ${JSON.stringify(listed)})`).toBe(expected);
      rows.push([name, wt, expected]);
    };

    row('clean', fresh(), true);
    const emptyDir = fresh();
    mkdirSync(join(emptyDir, 'specs', 'drafts'));
    row('an empty folder (git lists no folder)', emptyDir, true);
    const other = fresh();
    appendFileSync(join(other, 'README.md'), 'more\n');
    row('a change outside the folder', other, true);

    const modified = fresh();
    appendFileSync(join(modified, 'specs', 'index.md'), 'more\n');
    row('modified', modified, undefined);
    const sameSize = fresh();
    const before = statSync(join(sameSize, 'specs', 'index.md'));
    writeFileSync(join(sameSize, 'specs', 'index.md'), '# Rooz\n');
    utimesSync(join(sameSize, 'specs', 'index.md'), before.atime, before.mtime);
    row('same size and mtime, new content (ctime moved)', sameSize, undefined);
    const untracked = fresh();
    writeFileSync(join(untracked, 'specs', 'api', 'new.md'), '# New\n');
    row('untracked', untracked, undefined);
    const ignored = fresh();
    writeFileSync(join(ignored, 'specs', 'x.tmp'), 'scratch\n');
    writeFileSync(join(gitdir, 'info', 'exclude'), 'specs/*.tmp\n');
    row('ignored (git lists nothing; left to git)', ignored, undefined);
    rmSync(join(gitdir, 'info', 'exclude'));
    const staged = fresh();
    writeFileSync(join(staged, 'specs', 'staged.md'), '# Staged\n');
    git(staged, 'add', 'specs/staged.md');
    row('staged', staged, undefined);
    const deleted = fresh();
    rmSync(join(deleted, 'specs', 'api', 'auth.md'));
    row('deleted', deleted, undefined);
    const mode = fresh();
    chmodSync(join(mode, 'specs', 'index.md'), 0o755);
    row('made executable', mode, undefined);
    const racy = join(base, 'racy');
    git(dir, 'worktree', 'add', '-q', '--detach', racy, 'main');
    // Files newer than the index: git compares content, so this reader asks it.
    const future = new Date(Date.now() + 3600_000);
    utimesSync(join(racy, 'specs', 'index.md'), future, future);
    git(racy, 'update-index', '-q', '--refresh');
    row('a file newer than its index (racily clean)', racy, undefined);
    const committed = fresh();
    writeFileSync(join(committed, 'specs', 'index.md'), '# Root, edited\n');
    git(committed, 'commit', '-q', '-am', 'edit', '--author', 'T <t@e>');
    settle(committed, tracked);
    row('a commit since the base (its tree is not the base’s)', committed, undefined);

    // The board's overlay: the worktrees at trunk's tip, through this reader where it answers, through
    // git's two listings where it does not; each the same as git alone derives it.
    const viaGit = async () => Promise.all((await listWorktrees(dir, gitdir)).filter((w) => !w.main).map((w) => overlayEntry(w, 'main', 'specs', w.head === head ? head : undefined)));
    expect(await worktreeOverlay(dir, gitdir, 'specs', 'main')).toEqual(await viaGit());

    // The commit read from a pack (git gc packs it), and a worktree with no spec folder at all.
    git(dir, 'gc', '-q');
    expect(statSync(join(gitdir, 'objects', 'pack')).isDirectory()).toBe(true);
    row('clean, its commit packed', rows[0]![1], true);
    expect(untouchedSince(rows[0]![1], gitdir, head, 'docs')).toBe(true);
    expect(untouchedSince(rows[0]![1], gitdir, head, 'specs', { GIT_INDEX_FILE: '/elsewhere' })).toBeUndefined();
    expect(untouchedSince(rows[0]![1], gitdir, head, 'sp*')).toBeUndefined();
    const both = await viaGit();
    expect(await worktreeOverlay(dir, gitdir, 'specs', 'main')).toEqual(both);
    expect(rows.length).toBe(13);

    // Where every worktree is untouched the board runs no git at all: with none on the PATH, a git run
    // would fail and the worktree show undiffed (no fork point).
    for (const [, wt, expected] of rows) if (!expected) git(dir, 'worktree', 'remove', '--force', wt);
    const kept = both.filter((e) => rows.some(([, wt, expected]) => expected && wt === e.worktree));
    const path = process.env.PATH;
    process.env.PATH = '';
    try {
      expect(await worktreeOverlay(dir, gitdir, 'specs', 'main')).toEqual(kept);
    } finally {
      process.env.PATH = path;
    }
    expect(kept.map((e) => e.forkPoint)).toEqual([head, head, head]);
  });
});
