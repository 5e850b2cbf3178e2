import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SessionState } from '../../../projections/index.js';
import type { SessionRuntime } from '../log/session-runtime.js';
import type { SessionsProject } from '../log/sessions-project.js';
import { leaseHolder } from './screen-watcher-lease.js';
import { watchScreens } from './screen-watcher.js';

/*
 * A newer watcher's claim ends the older one when it is made, not at the older one's next timed check: a
 * resume's watcher and the one before it read one screen together for up to that period otherwise (seen
 * in CI as the old watcher outliving a 10 s wait on a loaded machine).
 */

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A git dir with a live session of no tmux pane (nothing to read), seen through the verbs' project shape; `reads` counts its log's reads. */
function project(status: () => string = () => 'running'): SessionsProject & { reads: () => number } {
  const gitdir = mkdtempSync(join(tmpdir(), 'trellis-watcher-'));
  dirs.push(gitdir);
  mkdirSync(join(gitdir, 'refs', 'trellis', 'sessions'), { recursive: true });
  let reads = 0;
  const get = async () => {
    reads++;
    return { status: status(), tmux: null } as unknown as SessionState;
  };
  return { gitdir, sessionLog: { get }, reads: () => reads } as unknown as SessionsProject & { reads: () => number };
}

/** Until the watcher's first check is over (its log read and what follows it in the same turn). */
async function firstCheckDone(p: { reads: () => number }): Promise<void> {
  while (p.reads() === 0) await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
}

describe('a session’s screen watcher and its lease', () => {
  it('leaves as soon as a newer watcher claims the lease, with an hour between its timed checks', async () => {
    const p = project();
    const ended = watchScreens(p, {} as SessionRuntime, 's-1', { checkMs: 3_600_000 });
    expect(leaseHolder(p.gitdir, 's-1')).toBe(process.pid);
    await firstCheckDone(p);
    // Another process's claim, made as claim() makes it: written aside, renamed over the lease.
    const lease = join(p.gitdir, 'trellis', 'watchers', 's-1');
    writeFileSync(`${lease}.1`, '1\n');
    renameSync(`${lease}.1`, lease);
    const at = Date.now();
    expect(await ended).toBe('replaced');
    expect(Date.now() - at).toBeLessThan(5_000);
    // Its exit leaves the newer watcher's lease alone.
    expect(leaseHolder(p.gitdir, 's-1')).toBe(1);
  });

  it('keeps watching while it holds the lease, and ends with its session', async () => {
    let status = 'running';
    const p = project(() => status);
    const ended = watchScreens(p, {} as SessionRuntime, 's-2', { checkMs: 3_600_000 });
    await firstCheckDone(p);
    // Another session's lease moving is not this one's business.
    writeFileSync(join(p.gitdir, 'trellis', 'watchers', 'other'), '1\n');
    status = 'interrupted';
    // The session's ref moves (as a transition's append renames it into place): the watcher checks and ends.
    writeFileSync(join(p.gitdir, 'refs', 'trellis', 'sessions', 's-2.lock'), 'x\n');
    renameSync(join(p.gitdir, 'refs', 'trellis', 'sessions', 's-2.lock'), join(p.gitdir, 'refs', 'trellis', 'sessions', 's-2'));
    expect(await ended).toBe('ended');
    expect(leaseHolder(p.gitdir, 's-2')).toBeNull();
  });
});
