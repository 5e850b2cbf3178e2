import { existsSync, rmSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, git, tempRepo } from '../../../test/helpers/repo.js';
import { openIssue, replyToIssue } from '../issues/verbs.js';
import { mergedIssues } from '../issues/merged-list.js';
import { openProject } from '../compose/open-project.js';
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

  it('a full read after a pack looks only at loose refs, and still sees every move, new thread and deletion', async () => {
    const dir = tempRepo();
    const reader = openProject(dir);
    const writer = openProject(dir);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await openIssue(writer, { concern: `t${i}`, by: 'ann' })).id);
    git(dir, 'pack-refs', '--all');
    const concerns = async () => (await reader.threads.all()).states.map((s) => `${s.concern}:${s.replies.length}`).sort();
    expect(await concerns()).toEqual(['t0:0', 't1:0', 't2:0', 't3:0', 't4:0']);
    await replyToIssue(writer, ids[1]!, { body: 'r', by: 'bob' }); // a loose ref over its packed line
    expect(await concerns()).toEqual(['t0:0', 't1:1', 't2:0', 't3:0', 't4:0']);
    await openIssue(writer, { concern: 't5', by: 'ann' }); // a new loose ref
    expect(await concerns()).toEqual(['t0:0', 't1:1', 't2:0', 't3:0', 't4:0', 't5:0']);
    git(dir, 'update-ref', '-d', `${PREFIX}${ids[2]}`); // packed-refs rewritten
    expect(await concerns()).toEqual(['t0:0', 't1:1', 't3:0', 't4:0', 't5:0']);
    // A loose ref removed by hand while its packed line stays: the thread is back at its packed tip.
    await replyToIssue(writer, ids[3]!, { body: 'r', by: 'bob' });
    expect(await concerns()).toEqual(['t0:0', 't1:1', 't3:1', 't4:0', 't5:0']);
    rmSync(join(dir, '.git', PREFIX, ids[3]!));
    expect(await concerns()).toEqual(['t0:0', 't1:1', 't3:0', 't4:0', 't5:0']);
  });
});
