import { existsSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, git, tempRepo } from '../../../test/helpers/repo.js';
import { mergedIssues, openIssue, replyToIssue } from '../issues/verbs.js';
import { openProject } from '../project.js';
import { readTipsStamped, tipsUnchanged } from './refs.js';

afterAll(cleanupRepos);

const PREFIX = 'refs/trellis/issues/';
const commits = (dir: string, n: number): string[] =>
  Array.from({ length: n }, (_, i) => git(dir, 'commit-tree', '-m', `c${i}`, git(dir, 'write-tree').trim()).trim());

/** Dates the ref folders and packed-refs a minute back, as a repository nobody wrote to lately is. */
function age(gitdir: string, ...paths: string[]): void {
  const past = new Date(Date.now() - 60_000);
  for (const p of paths) if (existsSync(join(gitdir, p))) utimesSync(join(gitdir, p), past, past);
}

describe('TipsStamp: whether any ref below a prefix can have moved since a read', () => {
  it('vouches for an unchanged read, and not after a new ref, a moved ref, a nested ref, a pack or a deletion', () => {
    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    const [a, b, c] = commits(dir, 3);
    git(dir, 'update-ref', `${PREFIX}x`, a!);
    const stamp = () => {
      age(gitdir, 'refs/trellis/issues');
      return readTipsStamped(gitdir, PREFIX, { relative: true }).stamp;
    };
    let s = stamp();
    expect(tipsUnchanged(s)).toBe(true);
    git(dir, 'update-ref', `${PREFIX}y`, b!);
    expect(tipsUnchanged(s)).toBe(false);
    s = stamp();
    git(dir, 'update-ref', `${PREFIX}x`, c!);
    expect(tipsUnchanged(s)).toBe(false);
    s = stamp();
    git(dir, 'update-ref', `${PREFIX}nested/z`, c!);
    expect(tipsUnchanged(s)).toBe(false);
    age(gitdir, 'refs/trellis/issues/nested');
    s = stamp();
    expect(tipsUnchanged(s)).toBe(true);
    git(dir, 'update-ref', `${PREFIX}nested/z`, a!);
    expect(tipsUnchanged(s)).toBe(false); // a move in a nested folder
    age(gitdir, 'refs/trellis/issues/nested');
    s = stamp();
    git(dir, 'pack-refs', '--all');
    expect(tipsUnchanged(s)).toBe(false);
    age(gitdir, 'packed-refs');
    s = stamp();
    expect(tipsUnchanged(s)).toBe(true);
    git(dir, 'update-ref', '-d', `${PREFIX}y`);
    expect(tipsUnchanged(s)).toBe(false);
  });

  it('never vouches while a folder was changed too recently to tell a later change in the same tick apart', () => {
    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    const [a] = commits(dir, 1);
    git(dir, 'update-ref', `${PREFIX}x`, a!);
    // Just written: its folder's mtime is now.
    expect(tipsUnchanged(readTipsStamped(gitdir, PREFIX).stamp)).toBe(false);
  });

  it('a warm in-process list builds nothing while no ref moved, and sees a move by another process', async () => {
    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    const writer = openProject(dir);
    const { id } = await openIssue(writer, { concern: 'first', by: 'ann' });
    age(gitdir, 'refs/trellis/issues');
    const reader = openProject(dir);
    const before = await mergedIssues(reader);
    expect(await mergedIssues(reader)).toBe(before);
    // Another process's write: a rename into the ref folder.
    await replyToIssue(openProject(dir), id, { body: 'second', by: 'bob' });
    const after = await mergedIssues(reader);
    expect(after.issues[0]!.replies.map((r) => r.body)).toEqual(['second']);
    // Right after a write the stamp is racy: every tip is read again, and still nothing is missed.
    await replyToIssue(openProject(dir), id, { body: 'third', by: 'bob' });
    expect((await mergedIssues(reader)).issues[0]!.replies.map((r) => r.body)).toEqual(['second', 'third']);
  });
});
