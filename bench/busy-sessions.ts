/**
 * `npm run bench -- busy` (issue 40): what watching busy sessions costs under one serve. N stand-in
 * agents (a bash loop drawing a 20-line frame ten times a second, registered as claude sessions so the
 * serve reads their screens) for N = 0, 10, 30, 50 (BENCH_BUSY_N); for each N, Trellis's own CPU over a
 * window (BENCH_BUSY_WINDOW_S, default 30 s: in 15 s windows a figure moved by ±0.05% per session between runs): the serve, its child, its live tmux control clients, the
 * children it reaped, each session's own screen watcher (started as a launch starts it; BENCH_BUSY_WATCHERS=0:
 * none) and the tmux server (not the stand-ins), as % of a core, also per kind, and the RSS of the serve and
 * of the watchers. The stand-ins are started as a launch starts an agent (Tmux.launch). At 30 busy sessions (or the
 * largest N below it), how long a dialog drawn on one more stand-in takes to become awaiting{permission}
 * on its log (BENCH_BUSY_DIALOGS trials).
 *
 * BENCH_BUSY_COMPARE=<another build's dist/src/cli/bin.js> serves the same sessions with that build too,
 * in turn at each N (the before of a before/after in one run); ratios are reported beside each figure.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openProject } from '../src/store/compose/open-project.js';
import { Tmux } from '../src/store/sessions/tmux/tmux.js';
import { cpuMs } from './agent-hooks.js';
import { BIN } from './issues.js';
import { report, round, tempRepo } from './lib.js';
import { startWatchers, stopWatchers, watcherProcesses } from './busy-watchers.js';

const NS = (process.env.BENCH_BUSY_N ?? '0,10,30,50').split(',').map(Number);
const WINDOW_S = Number(process.env.BENCH_BUSY_WINDOW_S ?? 30);
const DIALOGS = Number(process.env.BENCH_BUSY_DIALOGS ?? 10);
/** BENCH_BUSY_WATCHERS=0: no session's own screen watcher (what a launch starts beside each agent). */
const WATCHERS = process.env.BENCH_BUSY_WATCHERS !== '0';

/**
 * A busy agent's screen: 20 changing lines and claude's working footer, ten frames a second, no fork per frame,
 * each frame one write, as the agents' renderers (Ink's log-update for Claude Code) write a frame. Drawn with
 * a printf per line, as this stand-in first was, a frame was 22 writes: 220 pane events a second, which cost
 * the tmux server about 0.22% of a core per session with nothing watching at all.
 */
const STAND_IN = `i=0
while :; do
  i=$((i+1))
  if [ -e "$1" ]; then
    printf '\\033[H\\033[J Bash command\\n\\n   touch bench-file\\n\\n Do you want to proceed?\\n ❯ 1. Yes\\n   2. No\\n'
  else
    # Rows placed by cursor moves, not newlines: bash's printf flushes at each newline.
    frame=''
    for r in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do printf -v row '\\033[%d;1Hframe %6d row %2d %s%s%s\\033[K' $r $i $r $RANDOM $RANDOM $RANDOM; frame+=$row; done
    printf '%s\\033[21;1H✻ Working… (esc to interrupt)\\033[K' "$frame"
  fi
  read -t 0.1 -n 1 _ 2>/dev/null
done
`;

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

function rssMbOr0(pid: number): number {
  try {
    return rssMb(pid);
  } catch {
    return 0;
  }
}

interface Serve {
  readonly child: ChildProcess;
  readonly childPid: number;
}

async function startServe(bin: string, dir: string, env: NodeJS.ProcessEnv): Promise<Serve> {
  // BENCH_BUSY_PROF=<dir>: the serve's processes write CPU profiles there as they stop (where its time goes).
  const prof = process.env.BENCH_BUSY_PROF;
  const flags = prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : [];
  const child = spawn(process.execPath, [...flags, bin, 'serve', '--port', '0'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const l = out.split('\n').find((x) => /pid \d+, port/.test(x));
      if (l) resolve(l);
    });
    child.on('exit', (code) => reject(new Error(`trellis serve exited ${code}`)));
  });
  child.stdout!.resume();
  return { child, childPid: Number(/pid (\d+), port/.exec(line)![1]) };
}

/** The tmux control clients attached through `socket` (this is Linux: /proc), whoever started them. */
function controlClients(socket: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const args = readFileSync(`/proc/${d}/cmdline`, 'utf8').split('\0');
      if (args[0] === 'tmux' && args.includes('-C') && args.includes(socket)) out.push(Number(d));
    } catch {}
  }
  return out;
}

interface CpuSample {
  /** ms of CPU so far by process kind: the serve's node processes, the children it reaped, the tmux server. */
  readonly kinds: Record<string, number>;
  /** Each live tmux client of the serve's (its control clients, whose time a parent sees only once reaped). */
  readonly clients: Map<number, number>;
  /** Each process of the sessions' own watchers (a process gone by the second sample is not counted). */
  readonly watchers: Map<number, number>;
}

function cpuSample(s: Serve, tmuxPid: number, socket: string, watcherIds: readonly string[] = []): CpuSample {
  const cpu = (pid: number, children = false) => {
    try {
      return cpuMs(pid, children);
    } catch {
      return 0;
    }
  };
  const clients = new Map<number, number>();
  for (const pid of controlClients(socket)) clients.set(pid, cpu(pid));
  const watchers = new Map<number, number>();
  for (const pid of watcherProcesses(watcherIds)) watchers.set(pid, cpu(pid));
  return { kinds: { serve: cpu(s.child.pid!) + cpu(s.childPid), reaped_children: cpu(s.child.pid!, true) + cpu(s.childPid, true), tmux_server: cpu(tmuxPid) }, clients, watchers };
}

/** CPU between two samples by kind, as % of a core over `ms`. */
function cpuKinds(a: CpuSample, b: CpuSample, ms: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(b.kinds)) out[k] = ((v - a.kinds[k]!) / ms) * 100;
  let clients = 0;
  for (const [pid, v] of b.clients) clients += v - (a.clients.get(pid) ?? 0);
  out.tmux_clients = (clients / ms) * 100;
  let watchers = 0;
  for (const [pid, v] of b.watchers) watchers += v - (a.watchers.get(pid) ?? 0);
  out.watchers = (watchers / ms) * 100;
  return out;
}

async function stopServe(s: Serve): Promise<void> {
  if (s.child.exitCode !== null) return;
  s.child.kill('SIGTERM');
  await new Promise((r) => s.child.once('exit', r));
}

/** The `tmux -C` control clients of the tmux server on `sock` that run now: `<pid> (parent <ppid>)`. */
export function controlClientsOf(sock: string): string[] {
  return readdirSync('/proc').flatMap((pid) => {
    if (!/^\d+$/.test(pid)) return [];
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (!/(^|\/)tmux$/.test(argv[0]!) || !argv.includes(sock) || !argv.includes('-C')) return [];
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return [`${pid} (parent ${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]})`];
    } catch {
      return [];
    }
  });
}

/**
 * A stopped serve leaves no control client of its own on the sessions' tmux server (issue 40: a whole run
 * left them, and so the server, running). Allowed a few seconds to go: each sees its stdin close.
 */
async function assertNoControlClients(sock: string, what: string): Promise<void> {
  const t0 = performance.now();
  let left = controlClientsOf(sock);
  while (left.length && performance.now() - t0 < 5_000) {
    await sleep(100);
    left = controlClientsOf(sock);
  }
  if (left.length) throw new Error(`${what}: ${left.length} tmux control client(s) of ${sock} still running 5 s after the serve stopped: ${left.join(', ')}`);
}

export async function busySessionsBench(): Promise<void> {
  const { dir, cleanup } = tempRepo();
  const home = join(dir, '.home');
  mkdirSync(home);
  writeFileSync(join(dir, 'trellis.json'), '{}\n');
  // The queue never launches anything: the sessions are the stand-ins registered below.
  writeFileSync(join(dir, 'trellis.local.json'), JSON.stringify({ sessions: { minFreeMb: 1e12 } }));
  execFileSync('git', ['-C', dir, 'commit', '-q', '--allow-empty', '-m', 'init']);
  const sock = join(home, 'tmux.sock');
  const env: NodeJS.ProcessEnv = { ...process.env, TRELLIS_HOME: home };
  delete env.TMUX;
  const script = join(home, 'stand-in.sh');
  writeFileSync(script, STAND_IN);
  const tmux = (...args: string[]) => execFileSync('tmux', ['-S', sock, '-f', '/dev/null', ...args], { env, encoding: 'utf8' });
  const p = openProject(dir);
  const base = execFileSync('git', ['-C', dir, 'rev-parse', 'HEAD'], { encoding: 'utf8' }).trim();
  const meta = () => ({ by: 'bench', at: new Date().toISOString() });
  let made = 0;
  let tmuxPid = 0;
  /** A stand-in in its own tmux session, on the log as a running claude session (no worktree: nothing installed). */
  const standIn = async (name: string, dialogFile: string) => {
    // Started as a launch starts an agent (its window's options, size and hooks), so what tmux pays to host it is what it pays for an agent.
    const pane = await new Tmux(sock).launch(name, home, {}, `bash ${script} ${dialogFile}`);
    await p.sessionLog.write(name, { type: 'spawn', harness: 'claude', task: `stand-in ${name}`, nodes: [], issue: null, base, branch: `trellis/${name}`, worktree: join(home, 'none', name), ...meta(), source: 'user' });
    await p.sessionLog.write(name, { type: 'start', ...meta(), source: 'supervisor' });
    await p.sessionLog.write(name, { type: 'launch', tmuxSession: name, pane, ...meta(), source: 'supervisor' });
  };
  const builds: [string, string][] = [['', BIN]];
  if (process.env.BENCH_BUSY_COMPARE) builds.push(['compare', process.env.BENCH_BUSY_COMPARE]);
  const dialogAt = NS.filter((n) => n <= 30).at(-1);
  try {
    // The tmux server first, with a session that is no Trellis session (kept, so the server stays up).
    tmux('new-session', '-d', '-s', 'keep', 'sleep 1d');
    tmuxPid = Number(tmux('display-message', '-p', '#{pid}').trim());
    const zero = new Map<string, number>();
    for (const n of NS) {
      while (made < n) await standIn(`busy${made++}`, join(home, 'never'));
      const figures: Record<string, Record<string, unknown>> = {};
      // What hosting the busy panes costs the tmux server with nothing watching them (no serve): the part
      // of tmux_server no watcher can save.
      const idle0 = cpuMs(tmuxPid);
      const i0 = performance.now();
      await sleep(WINDOW_S * 1000);
      const unwatched = ((cpuMs(tmuxPid) - idle0) / (performance.now() - i0)) * 100;
      for (const [name, bin] of builds) {
        // Each session's own screen watcher, as its launch starts one (`session watch-screen <id>`): this
        // build's, whatever it does while a serve is online (this one stands by).
        const watchers = WATCHERS ? await startWatchers(bin, dir, env, made) : [];
        const serve = await startServe(bin, dir, env);
        try {
          // Let it boot, install its watches and read every screen once.
          await sleep(3_000);
          const before = cpuSample(serve, tmuxPid, sock, watchers);
          const t0 = performance.now();
          await sleep(WINDOW_S * 1000);
          const after = cpuSample(serve, tmuxPid, sock, watchers);
          const kinds = cpuKinds(before, after, performance.now() - t0);
          const pct = Object.values(kinds).reduce((a, b) => a + b, 0);
          if (n === 0) {
            zero.set(name, pct);
            for (const [k, v] of Object.entries(kinds)) zero.set(`${name}.${k}`, v);
          }
          const perSession = (v: number, key: string) => (n === 0 ? NaN : round((v - (zero.get(key) ?? 0)) / n));
          figures[name] = {
            cpu_pct_of_core: round(pct),
            cpu_pct_per_busy_session: perSession(pct, name),
            // Where it goes, per busy session: the serve's node processes, its tmux control clients
            // (alive through the window), processes it spawned and reaped, the tmux server.
            per_session_by_kind: Object.fromEntries(Object.entries(kinds).map(([k, v]) => [k, perSession(v, `${name}.${k}`)])),
            control_clients: after.clients.size,
            serve_rss_mb: round(rssMb(serve.childPid) + rssMb(serve.child.pid!)),
            tmux_clients_rss_mb: round([...after.clients.keys()].reduce((a, pid) => a + (rssMbOr0(pid)), 0)),
            tmux_server_rss_mb: round(rssMb(tmuxPid)),
            watcher_processes: watcherProcesses(watchers).length,
            watchers_rss_mb: round(watcherProcesses(watchers).reduce((a, pid) => a + rssMbOr0(pid), 0)),
          };
          if (n === dialogAt) figures[name]!.dialog_to_wait = await dialogLatency(p, home, standIn);
        } finally {
          await stopServe(serve);
          await stopWatchers(watchers);
        }
        await assertNoControlClients(sock, `${name || 'this build'}'s serve at ${n} busy sessions`);
      }
      const [mine, theirs] = [figures['']!, figures.compare];
      report('busy.sessions', {
        busy_sessions: n,
        window_s: WINDOW_S,
        tmux_server_unwatched_pct: round(unwatched),
        ...mine,
        ...(theirs ? { compare: theirs, cpu_ratio_to_compare: round((mine.cpu_pct_of_core as number) / (theirs.cpu_pct_of_core as number)) } : {}),
        ...(n === dialogAt ? { target_dialog_p95_ms: 500 } : {}),
        target_cpu_pct_per_busy_session: 0.25,
        cores: cpus().length,
        load_avg_1m: round(loadavg()[0]!),
      });
    }
  } finally {
    try {
      tmux('kill-server');
    } catch {}
    // The server outlived kill-server once (its 'keep' session left running after a whole bench run):
    // whatever it was doing, the bench leaves no process behind.
    try {
      if (tmuxPid) process.kill(tmuxPid, 'SIGKILL');
    } catch {}
    cleanup();
  }
}

/** Draws a permission dialog on one more stand-in, `DIALOGS` times: ms until its log says awaiting{permission}. */
async function dialogLatency(p: ReturnType<typeof openProject>, home: string, standIn: (name: string, dialogFile: string) => Promise<void>): Promise<Record<string, number>> {
  const file = join(home, 'dialog-now');
  const id = 'dialog0';
  const times: number[] = [];
  const state = async () => (await p.sessionLog.all()).states.find((s) => s.id === id);
  if (!(await state())) await standIn(id, file);
  // The serve watching it: a first dialog, answered, not counted.
  for (let i = -1; i < DIALOGS; i++) {
    const took = await oneDialog();
    if (i >= 0) times.push(took);
  }
  async function oneDialog(): Promise<number> {
    const t0 = performance.now();
    writeFileSync(file, '');
    for (;;) {
      const s = (await state())!;
      if (s.status === 'awaiting' && s.reason === 'permission') break;
      if (performance.now() - t0 > 15_000) throw new Error(`the dialog on ${id} never became a wait: ${s.status}{${s.reason}}`);
      await sleep(20);
    }
    const took = performance.now() - t0;
    // Answered: the dialog gone, the agent working again (as its hook would say).
    rmSync(file);
    await sleep(300);
    await p.sessionLog.write(id, { type: 'busy', by: 'bench', at: new Date().toISOString(), source: 'hook' });
    await sleep(800);
    return took;
  }
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);
  return { trials: times.length, p50_ms: at(0.5), p95_ms: at(0.95), max_ms: round(sorted.at(-1)!) };
}
