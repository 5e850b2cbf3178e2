/**
 * Sessions, confined ÷ unconfined (issue 45): spawn → the shell running in its pane, with bubblewrap
 * (`sessions.confine` at its default) and without (`"off"`), interleaved on one repository of 5,000 files
 * with the warm pool on (the default), so a change in the machine's load falls on both alike. "Running"
 * here is later than the other spawn bench's: spawnSession has returned, its log says running, and tmux
 * reports the shell itself as the pane's foreground command — inside the sandbox for a confined session,
 * so bubblewrap's own set-up (namespaces, mounts) is counted.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { basename, join } from 'node:path';
import { openProject } from '../src/store/compose/open-project.js';
import { poolDir, readPool } from '../src/store/sessions/worktrees/pool-entries.js';
import { defaultRuntime } from '../src/store/sessions/verbs/runtime.js';
import { closeSession, spawnSession } from '../src/store/sessions/verbs/verbs.js';
import { report, round, stats, tempRepo } from './lib.js';

export async function confineTiming(files = Number(process.env.BENCH_SESSION_FILES ?? 5_000), n = Number(process.env.BENCH_SPAWN_SAMPLES ?? 10)): Promise<void> {
  const repo = tempRepo();
  for (let i = 0; i < files; i++) {
    const folder = join(repo.dir, 'src', `mod${i % 50}`);
    if (i < 50) mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `file${i}.ts`), `export const value${i} = ${i};\n`);
  }
  execFileSync('git', ['add', '-A'], { cwd: repo.dir });
  execFileSync('git', ['commit', '-qm', 'files'], { cwd: repo.dir });
  const home = join(repo.dir, '..', `${basename(repo.dir)}-home`);
  const env = { ...process.env, TRELLIS_HOME: home };
  // The pane's login shell, by name: before it, the pane shows sh (tmux's command line) and bwrap.
  const shell = basename(process.env.SHELL || '/bin/sh');
  const rt = defaultRuntime(env, async () => null);
  const p = openProject(repo.dir);
  const setConfine = (confine: 'bubblewrap' | 'off') => writeFileSync(join(repo.dir, 'trellis.json'), JSON.stringify({ sessions: { max: 64, minFreeMb: 0, pool: 2, confine } }));
  const poolReady = async () => {
    const deadline = Date.now() + 300_000;
    while (readPool(poolDir(p, env)).filter((e) => e.state === 'ready' && e.present).length < 2) {
      if (Date.now() > deadline) throw new Error('the pool did not refill');
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const spawnOnce = async (i: number): Promise<number> => {
    const t0 = performance.now();
    const s = await spawnSession(p, rt, { task: `bench ${i}`, harness: 'shell', by: 'bench' });
    if (s.state !== 'running') throw new Error(`spawn ${i} is ${s.state}`);
    // The shell itself in the foreground of the pane: past bwrap's set-up when confined.
    for (const deadline = Date.now() + 10_000; ; ) {
      const r = await rt.tmux.run(['display-message', '-p', '-t', s.tmux!.pane, '#{pane_current_command}']);
      if (r.stdout.trim() === shell) break;
      if (Date.now() > deadline) throw new Error(`spawn ${i}: the pane runs ${r.stdout.trim()}, not the shell`);
      await new Promise((r) => setTimeout(r, 2));
    }
    const ms = performance.now() - t0;
    await closeSession(p, rt, s.id, 'bench');
    await poolReady();
    return ms;
  };
  try {
    const confined: number[] = [];
    const unconfined: number[] = [];
    setConfine('off');
    await spawnOnce(-1); // warm caches, fill the pool
    for (let i = 0; i < n; i++) {
      setConfine('bubblewrap');
      confined.push(await spawnOnce(i));
      setConfine('off');
      unconfined.push(await spawnOnce(i));
    }
    const ratio = round(stats(confined).median_ms / stats(unconfined).median_ms);
    report('sessions.spawn-to-running-confined', {
      files,
      load: loadavg().map((l) => round(l)),
      confined_bubblewrap: stats(confined),
      unconfined: stats(unconfined),
      ratio_confined_to_unconfined: ratio,
      target_ratio: 1.2,
      running_means: 'spawnSession returned, its log says running, and tmux shows the shell as the pane’s foreground command',
    });
  } finally {
    await rt.tmux.killServer();
    repo.cleanup();
    execFileSync('rm', ['-rf', home]);
  }
}
