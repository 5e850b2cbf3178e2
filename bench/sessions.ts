/**
 * Sessions: spawn → agent process running in its pane (a repository of 5,000 files; with and without the
 * warm pool, beside a plain `git worktree add`); the board rebuilt
 * after one transition among 200 sessions / 2,000 events; an idle server with 20 live sessions (RSS, CPU
 * and forks per minute, counted with strace on the server's process tree).
 */
import { spawn, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { LiveProject } from '../src/store/board/live.js';
import { openProject, type Project } from '../src/store/compose/open-project.js';
import { defaultRuntime, record } from '../src/store/sessions/verbs/runtime.js';
import { closeSession, spawnSession } from '../src/store/sessions/verbs/verbs.js';
import { poolDir, readPool } from '../src/store/sessions/worktrees/pool-entries.js';
import { BIN } from './issues.js';
import { report, round, stats, tempRepo, time } from './lib.js';

const FILES = Number(process.env.BENCH_SESSION_FILES ?? 5_000);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 30);

function repoWithFiles(files: number, config: object): ReturnType<typeof tempRepo> & { home: string } {
  const repo = tempRepo();
  for (let i = 0; i < files; i++) {
    const folder = join(repo.dir, 'src', `mod${i % 50}`);
    if (i < 50) mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `file${i}.ts`), `export const value${i} = ${i};\n`);
  }
  writeFileSync(join(repo.dir, 'trellis.json'), JSON.stringify(config));
  execFileSync('git', ['add', '-A'], { cwd: repo.dir });
  execFileSync('git', ['commit', '-qm', 'files'], { cwd: repo.dir });
  const home = join(repo.dir, '..', `${repo.dir.split('/').pop()}-home`);
  return { ...repo, home };
}

/** Until the pool holds `size` ready worktrees at `tip` and no refill is under way (bounded). */
async function poolSettled(p: Project, env: NodeJS.ProcessEnv, size: number, tip: string): Promise<void> {
  const dir = poolDir(p, env);
  const deadline = Date.now() + 300_000;
  for (;;) {
    const entries = readPool(dir);
    const ready = entries.filter((e) => e.state === 'ready' && e.present && e.commit === tip).length;
    if (ready >= size && entries.every((e) => e.state === 'ready') && !existsSync(join(dir, 'refill.lock'))) return;
    if (Date.now() > deadline) throw new Error(`the pool did not settle: ${JSON.stringify(entries)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * Spawn → running, side by side in one run on one repository of `files` files: a plain `git worktree add
 * -b` (what claude-squad, Conductor and Crystal do per session), a spawn with the pool off, and a spawn
 * with the warm pool (refilled between spawns, as between two sessions a person starts). "Running" means:
 * `spawnSession` has returned, the session's log says `running`, and tmux reports a live process (pid,
 * pane not dead) in the session's pane. It includes: the spawn and start events, claiming (or adding)
 * the worktree and switching it to `trellis/<id>`, `.worktreeinclude`, the adapter's install, tmux
 * new-session with the shell, and the launch event. Each session is closed between samples.
 */
export async function spawnPoolTiming(files = FILES, n = Number(process.env.BENCH_SPAWN_SAMPLES ?? 10)): Promise<void> {
  const made = performance.now();
  const repo = repoWithFiles(files, { sessions: { max: 64, minFreeMb: 0, pool: 0 } });
  const setupSeconds = round((performance.now() - made) / 1000);
  const env = { ...process.env, TRELLIS_HOME: repo.home };
  const rt = defaultRuntime(env, async () => null);
  const p = openProject(repo.dir);
  const tip = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo.dir, encoding: 'utf8' }).trim();
  const setPool = (pool: number) => writeFileSync(join(repo.dir, 'trellis.json'), JSON.stringify({ sessions: { max: 64, minFreeMb: 0, pool } }));
  const spawnOnce = async (i: number): Promise<{ ms: number; pooled: boolean }> => {
    const { ms, value } = await time(() => spawnSession(p, rt, { task: `bench ${i}`, harness: 'shell', by: 'bench' }));
    if (value.state !== 'running') throw new Error(`spawn ${i} is ${value.state}`);
    const pane = await rt.tmux.pane(value.tmux!.pane);
    if (!pane || pane.dead || !(pane.pid > 0)) throw new Error(`spawn ${i}: no live process in ${value.tmux!.pane}`);
    const pooled = !readFileSync(join(value.worktree, '.git'), 'utf8').trim().endsWith(`/${value.id}`);
    await closeSession(p, rt, value.id, 'bench');
    return { ms, pooled };
  };
  try {
    const plain: number[] = [];
    const bare: number[] = [];
    const pool: number[] = [];
    let hits = 0;
    // Interleaved, so a change in the machine's load falls on all three alike.
    setPool(2);
    await spawnOnce(-1); // warm caches; starts the first refill
    await poolSettled(p, env, 2, tip);
    for (let i = 0; i < n; i++) {
      const path = join(repo.home, `plain-${i}`);
      plain.push((await time(() => execFileSync('git', ['worktree', 'add', '-q', '-b', `plain-${i}`, path, 'HEAD'], { cwd: repo.dir }))).ms);
      execFileSync('git', ['worktree', 'remove', '--force', path], { cwd: repo.dir });
      execFileSync('git', ['branch', '-D', '-q', `plain-${i}`], { cwd: repo.dir });
      setPool(0);
      bare.push((await spawnOnce(i)).ms);
      setPool(2);
      const r = await spawnOnce(i);
      pool.push(r.ms);
      hits += Number(r.pooled);
      await poolSettled(p, env, 2, tip);
    }
    const withPool = stats(pool);
    const plainMedian = stats(plain).median_ms;
    report('sessions.spawn-to-running', {
      files,
      load: loadavg().map((l) => round(l)),
      plain_worktree_add: stats(plain),
      spawn_without_pool: stats(bare),
      spawn_with_pool: withPool,
      pool_hits: `${hits}/${n}`,
      ratio_with_pool_to_plain_add: round(withPool.median_ms / plainMedian),
      ratio_without_pool_to_plain_add: round(stats(bare).median_ms / plainMedian),
      target_median_ms: 300,
      target_p95_ms: 500,
      repo_setup_s: setupSeconds,
      running_means: 'spawnSession returned, its log says running, tmux reports a live process in its pane',
    });
  } finally {
    await rt.tmux.killServer();
    await poolSettled(p, env, 0, tip).catch(() => {});
    repo.cleanup();
    execFileSync('rm', ['-rf', repo.home]);
  }
}

/** 200 sessions of 10 events each, written straight to the log (no runtime: this measures the fold and the board). */
export async function boardTiming(): Promise<void> {
  const repo = repoWithFiles(10, {});
  const p = openProject(repo.dir);
  const ids: string[] = [];
  const base = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repo.dir, encoding: 'utf8' }).trim();
  try {
    for (let i = 0; i < 200; i++) {
      const id = `bench${String(i).padStart(4, '0')}`;
      ids.push(id);
      const at = new Date().toISOString();
      await p.sessionLog.write(id, { type: 'spawn', harness: 'shell', task: `task ${i}`, nodes: [], issue: null, base, branch: `trellis/${id}`, worktree: `/nowhere/${id}`, by: 'bench', at, source: 'user' });
      await record(p, id, { type: 'start' });
      await record(p, id, { type: 'launch', tmuxSession: id, pane: `%${i}` });
      // Seven turn signals: await, busy, await, ... (one event each): 10 events per session.
      for (let k = 0; k < 7; k++) await record(p, id, k % 2 ? { type: 'busy', source: 'hook' } : { type: 'await', reason: 'turn-end', source: 'hook' });
    }
    const live = new LiveProject(openProject(repo.dir)).start();
    const keepAlive = setInterval(() => {}, 1_000);
    await live.snapshot();
    const writer = openProject(repo.dir);
    const samples: number[] = [];
    for (let i = 0; i < 20; i++) {
      const changed = new Promise<void>((resolve) => {
        const once = (e: { cause: string }) => e.cause === 'sessions' && (live.bus.off('change', once), resolve());
        live.bus.on('change', once);
      });
      const before = live.stats.rebuilds;
      await record(writer, ids[i * 7]!, { type: 'prompt', body: `again ${i}`, source: 'user' });
      await changed;
      // With no page listening the serve rebuilds nothing per agent event (live.ts noteAnnounced); the
      // rebuild is paid by the first page that asks for the board after the change: that is the cost.
      await live.snapshot();
      if (live.stats.rebuilds === before) throw new Error('the board asked for after a transition was not rebuilt');
      samples.push(live.stats.lastRebuildMs);
    }
    report('sessions.board-rebuild-after-transition', { ...stats(samples), sessions: 200, events: 2_000 + 20, target_median_ms: 50, note: 'the rebuild the first board read after a transition pays (spec tree memoized, 200 session tips re-read, board re-assembled); with no page listening the serve rebuilds nothing per event' });
    const cold: number[] = [];
    for (let i = 0; i < 5; i++) {
      const fresh = openProject(repo.dir);
      cold.push((await time(() => fresh.sessionLog.all())).ms);
    }
    report('sessions.log-read.cached', { ...stats(cold), sessions: 200, note: 'a new process reading every session through the projection cache' });
    clearInterval(keepAlive);
    await live.stop();
  } finally {
    repo.cleanup();
  }
}

const cpuTicks = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
};
const rssKb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
const childrenOf = (pid: number): number[] => {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((t) => readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number));
  } catch {
    return [];
  }
};

export async function idleServer(): Promise<void> {
  const debug = (m: string) => process.env.BENCH_DEBUG && console.error(`idle: ${m}`);
  const repo = repoWithFiles(100, { sessions: { max: 20, minFreeMb: 0 } });
  const env = { ...process.env, TRELLIS_HOME: repo.home };
  const rt = defaultRuntime(env, async () => null);
  const p: Project = openProject(repo.dir);
  const trace = join(repo.home, 'strace.txt');
  try {
    // Spawned before the server starts, so the tmux server is not in the traced tree.
    for (let i = 0; i < 20; i++) await spawnSession(p, rt, { task: `idle ${i}`, harness: 'shell', by: 'bench' });
    debug('spawned 20');
    const serve = spawn('strace', ['-f', '--seccomp-bpf', '-ttt', '-e', 'trace=execve', '-o', trace, process.execPath, BIN, 'serve', '--port', '0'], { cwd: repo.dir, env, stdio: ['ignore', 'pipe', 'inherit'] });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      serve.stdout!.on('data', (d) => {
        out += d;
        const m = /at (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]!);
      });
      serve.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
    });
    debug(`serving at ${url}`);
    const listed = (await (await fetch(new URL('/api/sessions', url))).json()) as { sessions: { state: string }[] };
    if (listed.sessions.filter((s) => s.state === 'running').length !== 20) throw new Error('expected 20 running sessions');
    await new Promise((r) => setTimeout(r, 3_000));
    const node = (pid: number): number[] => [pid, ...childrenOf(pid).flatMap(node)];
    const tree = () => node(serve.pid!).filter((pid) => readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'node');
    debug('idle window starts');
    const t0 = Date.now() / 1000;
    const cpu0 = tree().reduce((s, pid) => s + cpuTicks(pid), 0);
    await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1_000));
    const t1 = Date.now() / 1000;
    const pids = tree();
    const cpu1 = pids.reduce((s, pid) => s + cpuTicks(pid), 0);
    const rss = pids.reduce((s, pid) => s + rssKb(pid), 0);
    // Stop the traced serve itself (strace exits when its last tracee does).
    const exited = new Promise((r) => serve.on('exit', r));
    for (const pid of childrenOf(serve.pid!)) process.kill(pid, 'SIGINT');
    await exited;
    // One process per pid: execve is logged once per PATH entry tried, so count pids, not lines.
    const started = new Map<string, string>();
    for (const line of readFileSync(trace, 'utf8').split('\n')) {
      const m = /^(\d+)\s+(\d+\.\d+) execve\("([^"]+)"/.exec(line);
      if (m && Number(m[2]) >= t0 && Number(m[2]) <= t1 && !started.has(m[1]!)) started.set(m[1]!, m[3]!.split('/').pop()!);
    }
    const byProgram: Record<string, number> = {};
    for (const program of started.values()) byProgram[program] = (byProgram[program] ?? 0) + 1;
    const perMinute = (n: number) => round((n * 60) / (t1 - t0));
    report('sessions.idle-20', {
      seconds: round(t1 - t0),
      rss_mb: round(rss / 1024),
      cpu_percent: round(((cpu1 - cpu0) / 100 / (t1 - t0)) * 100),
      forks_per_minute: perMinute(started.size),
      forks_per_minute_by_program: Object.fromEntries(Object.entries(byProgram).map(([k, v]) => [k, perMinute(v)])),
      note: 'supervisor + child (node processes); no polling per session: the reconcile is one tmux list-panes per 30 s, whatever the number of sessions',
    });
  } finally {
    await rt.tmux.killServer();
    repo.cleanup();
    execFileSync('rm', ['-rf', repo.home]);
  }
}

export async function sessionsBench(): Promise<void> {
  await spawnPoolTiming();
  await (await import('./sessions-confine.js')).confineTiming();
  await (await import('./sessions-confine-agent.js')).agentConfineTiming();
  await boardTiming();
  await idleServer();
}
