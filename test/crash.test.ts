import { spawn } from 'node:child_process';
import { existsSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN, cleanupRepos, fsck, git, ok, tempRepo, testEnv, trellis } from './helpers/repo.js';

afterAll(cleanupRepos);

/** A small seeded PRNG so a failing run can be replayed from the seed in the assertion message. */
function prng(seed: number) {
  let s = seed >>> 0;
  return () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32);
}

/** Starts `trellis issue reply`, SIGKILLs it after `delayMs` unless it exited first. */
function replyKilledAfter(dir: string, id: string, body: string, delayMs: number): Promise<{ code: number | null; killed: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'issue', 'reply', id, '--body', body], { cwd: dir, env: { ...testEnv(dir), TRELLIS_LOCK_WAIT_MS: '300' }, stdio: 'ignore' });
    let killed = false;
    const timer = setTimeout(() => {
      killed = child.kill('SIGKILL');
    }, delayMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, killed: killed && code === null });
    });
  });
}

describe('a writer killed with SIGKILL at random moments', () => {
  it('never leaves a broken ref, never loses an acknowledged write, and fsck stays clean', async () => {
    const dir = tempRepo();
    const id = (await ok(dir, ['issue', 'open', 'crash target'])).trim();
    const ref = `refs/trellis/issues/${id}`;
    const lock = join(dir, '.git', `${ref}.lock`);

    // Aim the kills at the part of a run where it writes: between start-up and exit.
    const t0 = Date.now();
    await ok(dir, ['issue', 'reply', id, '--body', 'warm-up']);
    // Kept up to date from every run that finished unkilled: a run faster than the warm-up (the load
    // eased) would otherwise outrun most kills, and the test would fail for want of kills, not a bug.
    let runMs = Date.now() - t0;

    const seed = Date.now() % 100_000;
    const rand = prng(seed);
    const acknowledged = ['warm-up'];
    let kills = 0;
    for (let i = 0; i < 40; i++) {
      const started = Date.now();
      const { code, killed } = await replyKilledAfter(dir, id, `crash-${i}`, Math.floor(runMs * (0.4 + 0.8 * rand())));
      if (code === 0) (acknowledged.push(`crash-${i}`), (runMs = Date.now() - started));
      if (killed) kills++;

      const tip = git(dir, 'rev-parse', ref).trim();
      expect(git(dir, 'cat-file', '-t', tip).trim(), `seed ${seed}`).toBe('commit');
      expect(() => JSON.parse(git(dir, 'cat-file', '-p', `${tip}:event.json`)), `seed ${seed}`).not.toThrow();

      if (existsSync(lock)) {
        // A crash inside the lock window: the next writer refuses loudly and names the repair.
        const r = await trellis(dir, ['issue', 'reply', id, '--body', 'blocked'], { env: { TRELLIS_LOCK_WAIT_MS: '300' } });
        expect(r.code).toBe(1);
        expect(r.stderr).toContain(`rm '${lock}'`);
        rmSync(lock);
      }
    }
    expect(kills, `seed ${seed}: the kills must land mid-run`).toBeGreaterThan(10);

    const issue = JSON.parse(await ok(dir, ['issue', 'show', id, '--json']));
    const bodies: string[] = issue.replies.map((r: { body: string }) => r.body);
    for (const body of acknowledged) expect(bodies, `seed ${seed}`).toContain(body);
    expect(new Set(bodies).size).toBe(bodies.length);
    expect(fsck(dir)).toBe('');
  });

  it('a lock left by a crashed writer is an error naming the file and the repair, never a hang', async () => {
    const dir = tempRepo();
    const id = (await ok(dir, ['issue', 'open', 'locked'])).trim();
    const lock = join(dir, '.git', 'refs/trellis/issues', `${id}.lock`);
    writeFileSync(lock, '');
    const old = new Date(Date.now() - 3_600_000);
    utimesSync(lock, old, old);
    const stale = await trellis(dir, ['issue', 'reply', id, '--body', 'x']);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toMatch(new RegExp(`^trellis: ${lock.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} exists \\(\\d+s old\\).*rm '`));

    // a fresh lock is waited on for a bounded time, then the same error
    writeFileSync(lock, '');
    const fresh = await trellis(dir, ['issue', 'reply', id, '--body', 'x'], { env: { TRELLIS_LOCK_WAIT_MS: '200' } });
    expect(fresh.code).toBe(1);
    expect(fresh.stderr).toContain(`rm '${lock}'`);

    rmSync(lock);
    await ok(dir, ['issue', 'reply', id, '--body', 'after repair']);
    expect(JSON.parse(await ok(dir, ['issue', 'show', id, '--json'])).replies.map((r: { body: string }) => r.body)).toEqual(['after repair']);
  });
});
