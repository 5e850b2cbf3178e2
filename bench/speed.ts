/**
 * `npm run bench -- speed`: the rows of issue 22 ("fast where a person waits"), each measured side by
 * side with what it is compared to, in one run, with the load average in every line. Sizes are
 * configurable for a quick look (BENCH_SPEED_FILES, BENCH_SPEED_THREADS: comma-separated); BENCH_SPEED_ONLY
 * picks rows (fanout, sse, cold, spawn). The gateway row (issue 22, item 2) is the gateway group's.
 */
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { registerPane } from '../test/helpers/sessions.js';
import { BIN } from './issues.js';
import { report, round, tempRepo } from './lib.js';
import { proc, viewer, type Viewer } from './paneio.js';
import { spawnPoolTiming } from './sessions.js';
import { boardRepo, sseLatencies, startServer, stopServer } from './graph.js';
import { coldVersusFloor } from './scale.js';

const list = (v: string | undefined, fallback: number[]) => (v ? v.split(',').map(Number) : fallback);

export async function speedBench(): Promise<void> {
  const only = process.env.BENCH_SPEED_ONLY?.split(',');
  const want = (name: string) => !only || only.includes(name);
  if (want('fanout')) await paneFanoutBench();
  if (want('sse')) await sseFanoutBench();
  if (want('cold')) for (const threads of list(process.env.BENCH_SPEED_THREADS, [10_000, 50_000])) await coldVersusFloor(threads);
  if (want('spawn')) for (const files of list(process.env.BENCH_SPEED_FILES, [5_000, 50_000])) await spawnPoolTiming(files, files > 20_000 ? 5 : 10);
}

/**
 * Server CPU for 10 viewers of one pane ÷ 1 viewer, the same 20 MB printed each time, through the public
 * port of a real `trellis serve` (its child's CPU, user + system, from /proc).
 */
export async function paneFanoutBench(mb = Number(process.env.BENCH_FANOUT_MB ?? 20)): Promise<void> {
  const { dir, cleanup } = tempRepo();
  writeFileSync(join(dir, 'trellis.json'), '{}\n');
  const home = join(dir, '.home');
  mkdirSync(home);
  const sock = join(home, 'tmux.sock');
  const env: NodeJS.ProcessEnv = { ...process.env, TRELLIS_HOME: home };
  delete env.TMUX;
  const tmux = (...args: string[]) => execFileSync('tmux', ['-S', sock, '-f', '/dev/null', ...args], { env, encoding: 'utf8' });
  writeFileSync(join(home, 'rc'), "PS1='$ '\n");
  tmux('new-session', '-d', '-s', 'flood', '-x', '80', '-y', '24', `bash --rcfile ${join(home, 'rc')} --noprofile`);
  await registerPane(dir, home, 'flood');
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const open: Viewer[] = [];
  try {
    const base = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        const m = /at (http:\S+)/.exec((out += d));
        if (m) resolve(m[1]!);
      });
      child.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
    });
    const pid = ((await (await fetch(new URL('/health', base))).json()) as { pid: number }).pid;
    const url = `${base.replace(/^http/, 'ws')}api/sessions/flood/socket`;
    let floods = 0;
    const flood = async (viewers: Viewer[], megabytes: number) => {
      const marker = `END-${++floods}-2`;
      const done = viewers.map((v) => v.wait(marker));
      const before = proc(pid).cpuMs;
      viewers[0]!.input(`head -c ${megabytes * 1_000_000} /dev/zero | tr '\\0' x; echo; echo END-${floods}-$((1+1))\r`);
      const ends = await Promise.all(done);
      return { cpuMs: proc(pid).cpuMs - before, dropped: ends.filter((e) => Number.isNaN(e)).length };
    };
    open.push(await viewer(url));
    await flood(open, 5);
    const one = await flood(open, mb);
    for (let i = 0; i < 9; i++) open.push(await viewer(url));
    const ten = await flood(open, mb);
    report('speed.pane-ten-viewers-cpu', { load: loadavg().map((l) => round(l)), mb, one_viewer_cpu_ms: one.cpuMs, ten_viewers_cpu_ms: ten.cpuMs, ratio: round(ten.cpuMs / one.cpuMs), dropped: ten.dropped, target_ratio: 1.5 });
  } finally {
    for (const v of open) v.ws.terminate();
    child.kill('SIGTERM');
    await once(child, 'exit');
    try {
      tmux('kill-server');
    } catch {}
    cleanup();
  }
}

/**
 * The first SSE event after a write, at 1,000 subscribers of /api/graph/stream, beside the same with one
 * subscriber on the same server in the same run: from the start of an append in this process to each
 * subscriber reading the event.
 */
export async function sseFanoutBench(clients = Number(process.env.BENCH_SSE_CLIENTS ?? 1_000), writes = 10): Promise<void> {
  const { dir, cleanup, ids } = await boardRepo();
  const { url, child } = await startServer(dir);
  const p = (xs: number[], q: number) => round([...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN);
  try {
    const one = await sseLatencies(url, dir, ids, 1, writes);
    const many = await sseLatencies(url, dir, ids.slice(writes), clients, writes);
    report('speed.sse-first-event', {
      load: loadavg().map((l) => round(l)),
      clients,
      writes,
      received: many.received,
      expected: clients * writes,
      p50_ms: p(many.latencies, 0.5),
      p99_ms: p(many.latencies, 0.99),
      one_client_p50_ms: p(one.latencies, 0.5),
      ratio_to_one_client: round(p(many.latencies, 0.5) / p(one.latencies, 0.5)),
      target_p50_ms: 150,
    });
  } finally {
    await stopServer(child);
    cleanup();
  }
}
