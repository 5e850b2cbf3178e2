import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupRepos, tempDir, tempRepo, testEnv, trellis } from './helpers/repo.js';
import { killTmux, tmux } from './helpers/sessions.js';
import { waitFor } from './helpers/wait.js';

const homes: string[] = [];
afterAll(() => {
  for (const h of homes.splice(0)) killTmux(h);
  cleanupRepos();
});

describe('the session queue across processes', () => {
  it('two CLIs passing the queue at once never launch past sessions.max: the budget is held by the store', async () => {
    const dir = tempRepo();
    const home = testEnv(dir).TRELLIS_HOME!;
    homes.push(home);
    writeFileSync(join(dir, 'trellis.json'), JSON.stringify({ sessions: { max: 1, minFreeMb: 0 } }));
    // Both spawns' passes are held (queue-test-pause.ts): first until both sessions are in the log, so
    // each pass reads both; then once counted. Without a lock both count the one free slot, and each
    // starts a session (the one that loses the first's compare-and-swap goes on to the next); with it,
    // the second waits on the lock before it reads.
    const pause = tempDir();
    const env = { TRELLIS_TEST_QUEUE_PAUSE: pause };
    const spawns = ['A', 'B'].map((task) => trellis(dir, ['session', 'spawn', task, '--harness', 'shell', '--json'], { env }));
    const lock = join(dir, '.git', 'trellis', 'queue.lock');
    const count = (point: string) => readdirSync(pause).filter((f) => f.startsWith(`${point}.`) && !f.endsWith('.go')).length;
    await waitFor(() => count('arrived') === 2, 'both spawns to write their session and reach the queue', 30_000);
    writeFileSync(join(pause, 'arrived.go'), '');
    // Both passes counted (no lock: the race is on), or one counted while the other waits on the lock.
    await waitFor(() => count('counted') === 2 || (count('counted') === 1 && existsSync(lock)), 'both passes to count, or one to hold the queue lock', 30_000);
    writeFileSync(join(pause, 'counted.go'), '');
    const runs = await Promise.all(spawns);
    for (const r of runs) expect(r.code, r.stderr).toBe(0);
    // What the store says afterwards, and what tmux runs: one session live, the other still queued.
    const listed = await trellis(dir, ['session', 'ls', '--json']);
    const sessions = JSON.parse(listed.stdout) as { id: string; state: string }[];
    expect(sessions.map((s) => s.state).sort()).toEqual(['queued', 'running']);
    const running = sessions.find((s) => s.state === 'running')!;
    expect(tmux(home, 'list-sessions', '-F', '#{session_name}')?.trim().split('\n')).toEqual([running.id]);
    // Each spawn answered what it left: one running, the other queued behind it.
    expect(runs.map((r) => JSON.parse(r.stdout).state as string).sort()).toEqual(['queued', 'running']);
    expect(existsSync(lock)).toBe(false);
  }, 60_000);

  it("a crashed pass's lock does not wedge the queue: a lock its holder stopped keeping young is broken", async () => {
    const dir = tempRepo();
    const home = testEnv(dir).TRELLIS_HOME!;
    homes.push(home);
    writeFileSync(join(dir, 'trellis.json'), JSON.stringify({ sessions: { max: 1, minFreeMb: 0 } }));
    const lock = join(dir, '.git', 'trellis', 'queue.lock');
    mkdirSync(join(dir, '.git', 'trellis'), { recursive: true });
    writeFileSync(lock, '');
    const old = new Date(Date.now() - 10 * 60_000);
    utimesSync(lock, old, old);
    const r = await trellis(dir, ['session', 'spawn', 'A', '--harness', 'shell', '--json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).state).toBe('running');
    expect(existsSync(lock)).toBe(false);
  }, 60_000);
});
