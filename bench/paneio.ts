/**
 * The pane stream through the public port of a real `trellis serve`, against real tmux panes: keystroke
 * echo latency, output throughput to one viewer, server CPU for 10 viewers against 1, 20 idle watched
 * sessions (forks per minute, RSS), and server RSS while a viewer that reads nothing is fed 50 MB.
 */
import { registerPane } from '../test/helpers/sessions.js';
import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import WebSocket from 'ws';
import { BIN } from './issues.js';
import { report, round, tempRepo } from './lib.js';

const env = () => {
  const e = { ...process.env };
  delete e.TMUX;
  return e;
};

export function proc(pid: number): { cpuMs: number; rss: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const ticks = Number(stat[11]) + Number(stat[12]);
  const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
  return { cpuMs: ticks * 10, rss };
}

export interface Viewer {
  ws: WebSocket;
  received: number;
  tail: string;
  wait(marker: string): Promise<number>;
  input(data: string): void;
}

export async function viewer(url: string): Promise<Viewer> {
  const ws = new WebSocket(url);
  ws.setMaxListeners(0);
  const v: Viewer = {
    ws,
    received: 0,
    tail: '',
    // Resolves when `marker` arrives, or with NaN when the viewer is closed first (dropped as too slow).
    wait: (marker) =>
      new Promise((resolve) => {
        const check = () => {
          if (!v.tail.includes(marker)) return;
          ws.off('message', check);
          v.tail = '';
          resolve(performance.now());
        };
        ws.on('message', check);
        ws.once('close', () => resolve(Number.NaN));
        check();
      }),
    input: (data) => ws.send(JSON.stringify({ type: 'input', data })),
  };
  let snapshot = false;
  ws.on('message', (data, binary) => {
    if (!binary) {
      if (String(data).includes('"snapshot"')) snapshot = true;
      return;
    }
    v.received += (data as Buffer).length;
    v.tail = (v.tail + (data as Buffer).toString('latin1')).slice(-256);
  });
  await once(ws, 'open');
  while (!snapshot) await new Promise((r) => setTimeout(r, 5));
  return v;
}

const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

export async function paneioBench(): Promise<void> {
  const { dir, cleanup } = tempRepo();
  writeFileSync(join(dir, 'trellis.json'), '{}\n');
  const home = join(dir, '.home');
  execFileSync('mkdir', ['-p', home]);
  const sock = join(home, 'tmux.sock');
  const tmux = (...args: string[]) => execFileSync('tmux', ['-S', sock, '-f', '/dev/null', ...args], { env: env(), encoding: 'utf8' });
  writeFileSync(join(home, 'rc'), "PS1='$ '\n");
  const shell = `bash --rcfile ${join(home, 'rc')} --noprofile`;
  tmux('new-session', '-d', '-s', 'echo', '-x', '80', '-y', '24', 'stty -icanon; cat > /dev/null');
  tmux('new-session', '-d', '-s', 'flood', '-x', '80', '-y', '24', shell);
  for (let i = 0; i < 20; i++) tmux('new-session', '-d', '-s', `idle${i}`, '-x', '80', '-y', '24', shell);
  // Session I/O reaches only the panes the session log knows: record these as live sessions.
  for (const name of ['echo', 'flood', ...Array.from({ length: 20 }, (_, i) => `idle${i}`)]) await registerPane(dir, home, name);
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], { cwd: dir, env: { ...env(), TRELLIS_HOME: home }, stdio: ['ignore', 'pipe', 'inherit'] });
  const open: WebSocket[] = [];
  try {
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        const l = out.split('\n').find((x) => /serving .* at http/.test(x));
        if (l) resolve(l);
      });
      child.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
    });
    const base = /at (http:\S+)/.exec(line)![1]!;
    const pid = ((await (await fetch(new URL('/health', base))).json()) as { pid: number }).pid;
    const socketUrl = (id: string) => `${base.replace(/^http/, 'ws')}api/sessions/${id}/socket`;

    // Keystroke echo: one character in (a JSON input message), its echo by the terminal back out.
    const echo = await viewer(socketUrl('echo'));
    open.push(echo.ws);
    const samples: number[] = [];
    for (let i = 0; i < 300; i++) {
      const ch = String.fromCharCode(97 + (i % 26));
      const marker = `${ch}`;
      echo.tail = '';
      const t0 = performance.now();
      const got = echo.wait(marker);
      echo.input(ch);
      samples.push((await got) - t0);
    }
    report('paneio.echo_latency', { p50_ms: round(pct(samples.slice(20), 0.5)), p99_ms: round(pct(samples.slice(20), 0.99)), n: samples.length - 20, target_p50_ms: 15, target_p99_ms: 50 });

    // Throughput to one viewer, and the server's CPU for 1 viewer against 10 on the same output.
    const flood = async (viewers: Viewer[], mb: number, tag: string) => {
      const marker = `END-${tag}-2`;
      const done = viewers.map((v) => v.wait(marker));
      const before = proc(pid).cpuMs;
      const start = viewers.map((v) => v.received);
      const t0 = performance.now();
      viewers[0]!.input(`head -c ${mb * 1_000_000} /dev/zero | tr '\\0' x; echo; echo END-${tag}-$((1+1))\r`);
      const ends = await Promise.all(done);
      const seconds = (Math.max(...ends.filter((e) => !Number.isNaN(e))) - t0) / 1000;
      return { seconds, bytes: viewers[0]!.received - start[0]!, cpuMs: proc(pid).cpuMs - before, dropped: ends.filter((e) => Number.isNaN(e)).length };
    };
    // tmux's own ceiling on this machine: a bare control client reading into /dev/null, same output.
    tmux('new-session', '-d', '-s', 'ceiling', '-x', '80', '-y', '24', shell);
    await registerPane(dir, home, 'ceiling');
    const bare = spawn('tmux', ['-S', sock, '-C', 'attach-session', '-t', '=ceiling'], { env: env(), stdio: ['pipe', 'ignore', 'ignore'] });
    bare.stdin.write('refresh-client -f pause-after=2\n');
    const c0 = performance.now();
    tmux('send-keys', '-t', '=ceiling:', "head -c 20000000 /dev/zero | tr '\\0' x; tmux -S " + sock + ' wait -S ceiling-done', 'Enter');
    tmux('wait-for', 'ceiling-done');
    const ceiling = 20 / ((performance.now() - c0) / 1000);
    bare.stdin.end();
    const one = await viewer(socketUrl('flood'));
    open.push(one.ws);
    await flood([one], 5, 'warm');
    const single = await flood([one], 20, 'one');
    report('paneio.throughput_one_viewer', { mb: round(single.bytes / 1e6), seconds: round(single.seconds), mb_per_s: round(single.bytes / 1e6 / single.seconds), tmux_control_client_ceiling_mb_per_s: round(ceiling), ratio_to_ceiling: round(single.bytes / 1e6 / single.seconds / ceiling), target_mb_per_s: 20, server_cpu_ms: single.cpuMs });
    const others: Viewer[] = [];
    for (let i = 0; i < 9; i++) others.push(await viewer(socketUrl('flood')));
    open.push(...others.map((v) => v.ws));
    const ten = await flood([one, ...others], 20, 'ten');
    report('paneio.ten_viewers_cpu', { viewers: 10, server_cpu_ms: ten.cpuMs, one_viewer_cpu_ms: single.cpuMs, ratio: round(ten.cpuMs / single.cpuMs), mb_per_s: round(ten.bytes / 1e6 / ten.seconds), dropped: ten.dropped });
    for (const v of [one, ...others]) v.ws.close();

    // 20 idle sessions, one viewer each: the server's children (its control clients) are sampled for
    // new processes; an idle stream should start none.
    const idle: Viewer[] = [];
    for (let i = 0; i < 20; i++) idle.push(await viewer(socketUrl(`idle${i}`)));
    open.push(...idle.map((v) => v.ws));
    const children = () => readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    const seen = new Set(children());
    const baseline = seen.size;
    const windowMs = 10_000;
    const t0 = Date.now();
    let newOnes = 0;
    while (Date.now() - t0 < windowMs) {
      for (const c of children()) if (!seen.has(c)) (seen.add(c), newOnes++);
      await new Promise((r) => setTimeout(r, 5));
    }
    report('paneio.idle_20_sessions', { sessions: 20, control_clients: baseline, note: 'control clients: the 20 idle sessions and the echo session', forks_per_min: round((newOnes * 60_000) / windowMs), server_rss_mb: round(proc(pid).rss / 2 ** 20), target_forks_per_min: 0 });
    for (const v of idle) v.ws.close();

    // A viewer that reads nothing while the pane prints 50 MB: dropped (4001), server RSS bounded.
    const fast = await viewer(socketUrl('flood'));
    const slow = await viewer(socketUrl('flood'));
    open.push(fast.ws, slow.ws);
    slow.ws.pause();
    const rssBefore = proc(pid).rss;
    let peak = rssBefore;
    const sampler = setInterval(() => (peak = Math.max(peak, proc(pid).rss)), 20);
    await flood([fast], 50, 'slow');
    clearInterval(sampler);
    slow.ws.resume();
    const [code] = (await once(slow.ws, 'close')) as [number];
    report('paneio.slow_viewer_50mb', { close_code: code, server_rss_before_mb: round(rssBefore / 2 ** 20), server_rss_peak_mb: round(peak / 2 ** 20), growth_mb: round((peak - rssBefore) / 2 ** 20) });
  } finally {
    for (const ws of open) ws.terminate();
    child.kill('SIGTERM');
    await once(child, 'exit');
    try {
      tmux('kill-server');
    } catch {
      // gone
    }
    readdirSync(dir);
    cleanup();
  }
}
