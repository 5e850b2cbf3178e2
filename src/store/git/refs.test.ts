import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, git, tempRepo } from '../../../test/helpers/repo.js';
import { waitFor } from '../../../test/helpers/wait.js';
import { compareAndSwapRef, replaceRefUnderLock } from './ref-lock.js';
import { readTip, readTips } from './refs.js';

afterAll(cleanupRepos);

const lock = { waitMs: 2_000, staleMs: 10_000 };

function commits(dir: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => git(dir, 'commit-tree', '-m', `c${i}`, git(dir, 'write-tree').trim()).trim());
}

describe('readTips / readTip', () => {
  it('reads loose and packed refs, a loose ref winning over its packed line, and skips locks', () => {
    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    const [a, b, c] = commits(dir, 3);
    git(dir, 'update-ref', 'refs/trellis/issues/x', a!);
    git(dir, 'update-ref', 'refs/trellis/issues/y', b!);
    git(dir, 'pack-refs', '--all');
    git(dir, 'update-ref', 'refs/trellis/issues/y', c!); // loose now overrides packed
    git(dir, 'update-ref', 'refs/trellis/issues/z', c!);
    writeFileSync(join(gitdir, 'refs/trellis/issues/w.lock'), `${a}\n`);
    git(dir, 'update-ref', 'refs/heads/other', a!);

    expect(readTips(gitdir, 'refs/trellis/issues/')).toEqual(
      new Map([
        ['refs/trellis/issues/x', a],
        ['refs/trellis/issues/y', c],
        ['refs/trellis/issues/z', c],
      ]),
    );
    expect(readTip(gitdir, 'refs/trellis/issues/x')).toBe(a);
    expect(readTip(gitdir, 'refs/trellis/issues/nope')).toBeNull();
  });

  it('sees a packed-refs file rewritten by git', () => {
    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    const [a, b] = commits(dir, 2);
    git(dir, 'update-ref', 'refs/trellis/issues/x', a!);
    git(dir, 'pack-refs', '--all');
    expect(readTip(gitdir, 'refs/trellis/issues/x')).toBe(a);
    git(dir, 'update-ref', 'refs/trellis/issues/x', b!);
    git(dir, 'pack-refs', '--all');
    expect(existsSync(join(gitdir, 'refs/trellis/issues/x'))).toBe(false);
    expect(readTip(gitdir, 'refs/trellis/issues/x')).toBe(b);
  });
});

describe('compareAndSwapRef', () => {
  it('creates, advances, and refuses a stale expectation', async () => {
    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    const [a, b, c] = commits(dir, 3);
    const ref = 'refs/trellis/issues/t';
    expect(await compareAndSwapRef(gitdir, ref, null, a!, lock)).toBe(true);
    expect(await compareAndSwapRef(gitdir, ref, null, b!, lock)).toBe(false);
    expect(await compareAndSwapRef(gitdir, ref, a!, b!, lock)).toBe(true);
    expect(await compareAndSwapRef(gitdir, ref, a!, c!, lock)).toBe(false);
    expect(git(dir, 'rev-parse', ref).trim()).toBe(b);
    expect(existsSync(join(gitdir, `${ref}.lock`))).toBe(false);
  });

  it('interoperates with git update-ref in both directions', async () => {
    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    const [a, b, c] = commits(dir, 3);
    const ref = 'refs/trellis/issues/t';
    git(dir, 'update-ref', ref, a!);
    expect(await compareAndSwapRef(gitdir, ref, a!, b!, lock)).toBe(true);
    // git's own compare-and-swap agrees on the value we wrote
    git(dir, 'update-ref', ref, c!, b!);
    expect(await compareAndSwapRef(gitdir, ref, b!, a!, lock)).toBe(false);
    // a ref that only lives in packed-refs is swapped like a loose one
    git(dir, 'pack-refs', '--all');
    expect(await compareAndSwapRef(gitdir, ref, c!, a!, lock)).toBe(true);
    expect(git(dir, 'rev-parse', ref).trim()).toBe(a);
  });

  it('git update-ref respects our lock', () => {
    const dir = tempRepo();
    const [a, b] = commits(dir, 2);
    git(dir, 'update-ref', 'refs/trellis/issues/t', a!);
    writeFileSync(join(dir, '.git/refs/trellis/issues/t.lock'), '');
    expect(() => execFileSync('git', ['update-ref', 'refs/trellis/issues/t', b!], { cwd: dir, stdio: 'pipe' })).toThrow(/t\.lock/);
  });

  it('waits for a live writer to release the lock', async () => {
    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    const [a, b] = commits(dir, 2);
    const ref = 'refs/trellis/issues/t';
    git(dir, 'update-ref', ref, a!);
    const lockPath = join(gitdir, `${ref}.lock`);
    writeFileSync(lockPath, '');
    const pending = compareAndSwapRef(gitdir, ref, a!, b!, lock); // first attempt has met the lock
    execFileSync('rm', [lockPath]);
    expect(await pending).toBe(true);
    expect(readTip(gitdir, ref)).toBe(b);
  });

  it('refuses at once on a crashed writer’s stale lock, naming the file and the repair', async () => {
    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    const [a, b] = commits(dir, 2);
    const ref = 'refs/trellis/issues/t';
    git(dir, 'update-ref', ref, a!);
    const lockPath = join(gitdir, `${ref}.lock`);
    writeFileSync(lockPath, '');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lockPath, old, old);
    const started = Date.now();
    await expect(compareAndSwapRef(gitdir, ref, a!, b!, { waitMs: 60_000, staleMs: 10_000 })).rejects.toMatchObject({
      code: 'REF_LOCKED',
      message: expect.stringContaining(`rm '${lockPath}'`),
    });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(readTip(gitdir, ref)).toBe(a);
  });

  it('a holder keeps its lock fresh while its build waits (a promote on its forge): a writer waiting past staleMs still gets it after', async () => {
    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    const [a, b, c] = commits(dir, 3);
    const ref = 'refs/trellis/issues/t';
    git(dir, 'update-ref', ref, a!);
    const lockPath = join(gitdir, `${ref}.lock`);
    const opts = { waitMs: 10_000, staleMs: 150 };
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const holder = replaceRefUnderLock(gitdir, ref, opts, async () => {
      await held;
      return b!;
    });
    const taken = await waitFor(() => existsSync(lockPath) && statSync(lockPath).mtimeMs, 'the lock taken');
    const waiter = compareAndSwapRef(gitdir, ref, b!, c!, opts).catch((err: Error) => err);
    // Held for three times staleMs: a lock left to age would read as a crashed writer's by now.
    await waitFor(() => statSync(lockPath).mtimeMs > taken + 3 * opts.staleMs, 'the held lock refreshed', 3_000);
    release();
    expect(await holder).toBe(b);
    expect(await waiter).toBe(true);
    expect(readTip(gitdir, ref)).toBe(c);
  });

  it('gives up with the same error when a fresh lock is never released', async () => {
    const dir = tempRepo();
    const gitdir = join(dir, '.git');
    const [a, b] = commits(dir, 2);
    const ref = 'refs/trellis/issues/t';
    mkdirSync(join(gitdir, 'refs/trellis/issues'), { recursive: true });
    writeFileSync(join(gitdir, `${ref}.lock`), '');
    await expect(compareAndSwapRef(gitdir, ref, null, b!, { waitMs: 100, staleMs: 60_000 })).rejects.toMatchObject({ code: 'REF_LOCKED' });
    expect(readTip(gitdir, ref)).toBeNull();
    void a;
  });
});
