import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { encodeProject } from '../src/store/trellis-home.js';
import { listWorktrees } from '../src/store/spec/worktrees.js';
import { cleanupRepos, git, ok, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { killTmux, waitFor } from './helpers/sessions.js';

/*
 * The warm worktree pool (DESIGN.md §15), through the real CLI: real git worktrees, the real background
 * refill process, real tmux sessions on the test's own socket.
 */

const homes: string[] = [];
const pids: number[] = [];
afterEach(() => {
  for (const h of homes.splice(0)) killTmux(h);
  for (const pid of pids.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {}
  }
});
afterAll(() => cleanupRepos());

/** A project with a few files, its own TRELLIS_HOME and `sessions` settings. */
function project(sessions: object = {}): { dir: string; home: string; pool: string } {
  const dir = tempRepo({ commit: false });
  for (let i = 0; i < 40; i++) writeFileSync(join(dir, `f${i}.txt`), `file ${i}\n`);
  writeFileSync(join(dir, 'trellis.json'), JSON.stringify({ sessions: { minFreeMb: 0, max: 8, ...sessions } }));
  writeFileSync(join(dir, '.gitignore'), '.trellis-home/\n');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-qm', 'files');
  const home = testEnv(dir).TRELLIS_HOME!;
  homes.push(home);
  return { dir, home, pool: join(home, 'worktrees', encodeProject(dir), '.pool') };
}

const listing = (pool: string) => (existsSync(pool) ? readdirSync(pool).sort() : []);
const ready = (pool: string) => listing(pool).filter((n) => n.endsWith('.ready'));
/** The pool is full and quiet: `n` ready worktrees, nothing being made, no lock. */
const settled = (pool: string, n: number, commit?: string) => {
  const names = listing(pool);
  const r = names.filter((x) => x.endsWith('.ready'));
  if (r.length !== n || names.some((x) => x.includes('.making.') || x.includes('.claimed.') || x === 'refill.lock')) return false;
  return commit === undefined || r.every((m) => readFileSync(join(pool, m), 'utf8').trim() === commit) ? r : false;
};
const spawnShell = async (dir: string, task: string) => JSON.parse(await ok(dir, ['session', 'spawn', task, '--harness', 'shell', '--json']));
/** The name of the admin entry git keeps for the worktree at `path` (`<gitdir>/worktrees/<name>`). */
const adminName = (path: string) => readFileSync(join(path, '.git'), 'utf8').trim().split('/').pop()!;
const clean = (path: string) => git(path, 'status', '--porcelain', '--untracked-files=all') === '';

describe('the warm worktree pool', () => {
  it('a spawn with an empty pool adds its worktree plainly; the pool then fills in the background and the next spawn claims one', async () => {
    const { dir, pool } = project();
    const trunk = git(dir, 'rev-parse', 'HEAD').trim();
    const first = await spawnShell(dir, 'first');
    expect(first.state).toBe('running');
    expect(git(first.worktree, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe(`trellis/${first.id}`);
    expect(adminName(first.worktree)).toBe(first.id);

    const filled = await waitFor('the pool to fill to 2', () => settled(pool, 2, trunk));
    // Pooled worktrees are on a detached HEAD: they hold no branch of their own.
    for (const marker of filled) expect(git(join(pool, marker.replace(/\.ready$/, '')), 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe('HEAD');
    // ...and the board's worktree overlay leaves them out.
    expect((await listWorktrees(dir)).map((w) => w.path)).toEqual([dir, first.worktree].map((p) => realpathSync(p)));

    const second = await spawnShell(dir, 'second');
    const claimed = adminName(second.worktree);
    expect(filled.map((m) => m.replace(/\.ready$/, ''))).toContain(claimed);
    expect(git(second.worktree, 'rev-parse', '--abbrev-ref', 'HEAD').trim()).toBe(`trellis/${second.id}`);
    expect(git(second.worktree, 'rev-parse', 'HEAD').trim()).toBe(trunk);
    expect(clean(second.worktree)).toBe(true);
    expect(readFileSync(join(second.worktree, 'f7.txt'), 'utf8')).toBe('file 7\n');
    // The claimed one left the pool; the pool refills behind it.
    const refilled = await waitFor('the pool to refill to 2', () => settled(pool, 2, trunk));
    expect(refilled).not.toContain(`${claimed}.ready`);

    // Closing the session removes its (once pooled) worktree like any other.
    await ok(dir, ['session', 'close', second.id]);
    expect(existsSync(second.worktree)).toBe(false);
  });

  it('a claimed worktree behind trunk is moved forward to the session base, and the pool follows trunk', async () => {
    const { dir, pool } = project();
    await spawnShell(dir, 'warm up');
    const old = git(dir, 'rev-parse', 'HEAD').trim();
    const filled = await waitFor('the pool to fill', () => settled(pool, 2, old));
    // Trunk moves under the pooled worktrees: one file changed, one added, one removed.
    writeFileSync(join(dir, 'f1.txt'), 'changed\n');
    writeFileSync(join(dir, 'new.txt'), 'new\n');
    rmSync(join(dir, 'f2.txt'));
    git(dir, 'add', '-A');
    git(dir, 'commit', '-qm', 'trunk moves');
    const tip = git(dir, 'rev-parse', 'HEAD').trim();

    const s = await spawnShell(dir, 'after the move');
    expect(filled.map((m) => m.replace(/\.ready$/, ''))).toContain(adminName(s.worktree));
    expect(git(s.worktree, 'rev-parse', 'HEAD').trim()).toBe(tip);
    expect(readFileSync(join(s.worktree, 'f1.txt'), 'utf8')).toBe('changed\n');
    expect(readFileSync(join(s.worktree, 'new.txt'), 'utf8')).toBe('new\n');
    expect(existsSync(join(s.worktree, 'f2.txt'))).toBe(false);
    expect(clean(s.worktree)).toBe(true);
    // The refill moves the other pooled worktree forward (the same worktree, not a new one) and adds one.
    const after = await waitFor('the pool at the new tip', () => settled(pool, 2, tip));
    const kept = filled.find((m) => !m.startsWith(adminName(s.worktree)))!;
    expect(after).toContain(kept);
    expect(readFileSync(join(pool, kept.replace(/\.ready$/, ''), 'f1.txt'), 'utf8')).toBe('changed\n');
  });

  it('sessions.pool: 0 turns it off: no pooled worktree is ever made', async () => {
    const { dir, pool } = project({ pool: 0 });
    const a = await spawnShell(dir, 'a');
    const b = await spawnShell(dir, 'b');
    expect(adminName(a.worktree)).toBe(a.id);
    expect(adminName(b.worktree)).toBe(b.id);
    // kickRefill decides synchronously inside the spawn: with the pool off no refill process starts.
    expect(existsSync(pool)).toBe(false);
    expect(git(dir, 'worktree', 'list', '--porcelain')).not.toContain('/.pool/');
    const doctor = await trellis(dir, ['doctor']);
    expect(doctor.stdout).not.toContain('worktree pool');
  });

  it('refuses a pool size that is not a whole number >= 0', async () => {
    const { dir } = project({ pool: -1 });
    const r = await trellis(dir, ['session', 'spawn', 'x', '--harness', 'shell']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('"pool"?: whole number >= 0');
  });

  it('a spawn while the pool is being refilled never takes a worktree that is not ready; a crash mid-refill leaves nothing half-made in use', async () => {
    const { dir, home, pool } = project();
    // A post-checkout hook that holds a pooled worktree's checkout while the flag exists: the refill
    // is caught mid-way, deterministically.
    const flag = join(home, 'hold');
    const reached = join(home, 'reached');
    mkdirSync(home, { recursive: true });
    writeFileSync(flag, '');
    const hook = join(dir, '.git', 'hooks', 'post-checkout');
    writeFileSync(hook, `#!/bin/sh\ncase "$PWD" in */.pool/*) if [ -e '${flag}' ]; then touch '${reached}'; sleep 60; fi;; esac\nexit 0\n`);
    chmodSync(hook, 0o755);

    const first = await spawnShell(dir, 'first');
    await waitFor('the refill to be inside a checkout', () => existsSync(reached));
    const making = listing(pool).find((n) => n.includes('.making.'))!;
    expect(making).toBeTruthy();
    const half = making.replace(/\.making\.\d+$/, '');
    const refiller = Number(making.split('.').pop());
    pids.push(refiller);
    expect(ready(pool)).toEqual([]);

    // Spawn while the refill is under way: the half-made worktree is not taken.
    const during = await spawnShell(dir, 'during the refill');
    expect(during.state).toBe('running');
    expect(adminName(during.worktree)).toBe(during.id);
    expect(clean(during.worktree)).toBe(true);
    expect(existsSync(join(pool, half))).toBe(true);

    // The refill process crashes (killed with its git and hook).
    process.kill(-refiller, 'SIGKILL');
    await waitFor('the refill process to be gone', () => {
      try {
        process.kill(refiller, 0);
        return false;
      } catch {
        return true;
      }
    });
    rmSync(flag);
    expect(ready(pool)).toEqual([]);
    // The next spawn finds nothing ready (the rubble is not claimable), and its refill clears the rubble.
    const next = await spawnShell(dir, 'after the crash');
    expect(next).toMatchObject({ state: 'running' });
    expect(adminName(next.worktree)).toBe(next.id);
    expect(clean(next.worktree)).toBe(true);
    const trunk = git(dir, 'rev-parse', 'HEAD').trim();
    const after = await waitFor('the pool rebuilt after the crash', () => settled(pool, 2, trunk));
    expect(after.some((m) => m.startsWith(half))).toBe(false);
    expect(existsSync(join(pool, half))).toBe(false);
    expect(git(dir, 'worktree', 'list', '--porcelain')).not.toContain(half);
    for (const m of after) expect(clean(join(pool, m.replace(/\.ready$/, '')))).toBe(true);
    void first;
  });

  it('doctor shows the pool and its disk use; --repair rebuilds it but never removes a pooled worktree that holds changes', async () => {
    const { dir, pool } = project();
    await spawnShell(dir, 'warm up');
    const trunk = git(dir, 'rev-parse', 'HEAD').trim();
    const filled = await waitFor('the pool to fill', () => settled(pool, 2, trunk));
    const doctor = await ok(dir, ['doctor']);
    expect(doctor).toMatch(/ok +worktree pool: 2 of 2 ready \(0 behind trunk\), 0 other, \d+ MB in .*\.pool/);

    // Somebody worked inside a pooled worktree, and its marker is gone (handed back): it must survive.
    const worked = filled[0]!.replace(/\.ready$/, '');
    rmSync(join(pool, filled[0]!));
    writeFileSync(join(pool, worked, 'notes.txt'), 'my work\n');
    const repaired = await trellis(dir, ['doctor', '--repair']);
    expect(repaired.stdout).toContain('rebuilt the worktree pool');
    expect(readFileSync(join(pool, worked, 'notes.txt'), 'utf8')).toBe('my work\n');
    expect(ready(pool)).toHaveLength(2);
    expect(ready(pool)).not.toContain(filled[1]); // the clean one was rebuilt
    expect(repaired.stdout).toMatch(/warn +worktree pool: 2 of 2 ready .*1 other/);
  });
});
