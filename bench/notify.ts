/**
 * Notifications (issue 32): a session starts waiting (`permission`, as `trellis session signal` writes
 * it) → a hub.json webhook target receives the event, through the serve's session ref and stream, the
 * gateway's feed, the notify diff and the target's queue; the debounce set to 0 so the path itself is
 * measured (the shipped default adds its 5 s on purpose). Beside it: the signal's own latency (the
 * session's transition) with no target, and with a target that never answers, alternating.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHubServer } from '../src/gateway/hub-server.js';
import { bindPublic } from '../src/http/bind.js';
import { createDemoProject } from '../src/store/setup/demo.js';
import { openProject } from '../src/store/compose/open-project.js';
import { defaultRuntime } from '../src/store/sessions/verbs/runtime.js';
import { signalSession } from '../src/store/sessions/verbs/signal-verb.js';
import { BIN } from './issues.js';
import { report, round, stats } from './lib.js';

const SAMPLES = Number(process.env.BENCH_NOTIFY_SAMPLES ?? 20);

export async function notifyBench(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'trellis-bench-notify-'));
  const dir = join(home, 'p');
  await createDemoProject(dir);
  writeFileSync(join(home, 'projects.json'), JSON.stringify({ version: 1, projects: [{ root: dir, addedAt: new Date().toISOString() }] }));
  const env = { ...process.env, TRELLIS_HOME: home };
  const arrivals: { type: string; at: number }[] = [];
  let arrived: (() => void) | undefined;
  const hook = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      arrivals.push({ type: (JSON.parse(body) as { type: string }).type, at: performance.now() });
      res.end();
      arrived?.();
    });
  });
  const held: ServerResponse[] = [];
  const dead = http.createServer((req, res) => (req.resume(), held.push(res)));
  const url = async (s: http.Server) => (await new Promise<void>((r) => s.listen(0, '127.0.0.1', r)), `http://127.0.0.1:${(s.address() as AddressInfo).port}/`);
  const [hookUrl, deadUrl] = [await url(hook), await url(dead)];
  const setTargets = (targets: object[]) => writeFileSync(join(home, 'hub.json'), JSON.stringify({ notify: { debounceMs: 0, targets } }));
  setTargets([{ type: 'webhook', url: hookUrl }]);
  const server = await serveFor(dir, env);
  const hub = createHubServer({ home, tls: false });
  await bindPublic(hub.server, 0, '127.0.0.1');
  const project = openProject(dir);
  try {
    const spawned = spawnSync(process.execPath, [BIN, 'session', 'spawn', 'Bench the notifier', '--harness', 'shell'], { cwd: dir, env, encoding: 'utf8' });
    const id = spawned.stdout.trim();
    if (spawned.status !== 0 || !id) throw new Error(`session spawn failed: ${spawned.stderr}`);
    // The notifier's first list is its baseline (what waits then is not news): start once it is taken.
    for (const deadline = Date.now() + 30_000; !hub.state.notifier!.settled; ) {
      if (Date.now() > deadline) throw new Error('the notifier never followed the project');
      await new Promise((r) => setTimeout(r, 20));
    }
    const until = (type: string, from: number) =>
      new Promise<number>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${type} event within 10 s`)), 10_000);
        const check = () => {
          const hit = arrivals.slice(from).find((a) => a.type === type);
          if (hit) {
            clearTimeout(timer);
            arrived = undefined;
            resolve(hit.at);
          } else arrived = check;
        };
        check();
      });
    const toHook: number[] = [];
    const signalMs = { none: [] as number[], hung: [] as number[] };
    for (let i = 0; i < SAMPLES; i++) {
      const hung = i % 2 === 1;
      setTargets(hung ? [{ type: 'webhook', url: hookUrl }, { type: 'webhook', url: deadUrl }] : [{ type: 'webhook', url: hookUrl }]);
      const from = arrivals.length;
      const t0 = performance.now();
      await signalSession(project, defaultRuntime(env), id, 'permission', null);
      (hung ? signalMs.hung : signalMs.none).push(performance.now() - t0);
      toHook.push((await until('wait', from)) - t0);
      const t1 = performance.now();
      await signalSession(project, defaultRuntime(env), id, 'busy', null);
      (hung ? signalMs.hung : signalMs.none).push(performance.now() - t1);
      await until('withdraw', from);
    }
    const load = loadavg().map((l) => round(l));
    report('notify.wait-to-webhook', { ...stats(toHook), target_p95_ms: 1000, load, note: 'signal permission → the webhook target receives the wait event (debounce 0)' });
    report('notify.transition-with-hung-target', {
      no_target_median_ms: stats(signalMs.none).median_ms,
      hung_target_median_ms: stats(signalMs.hung).median_ms,
      no_target_p95_ms: stats(signalMs.none).p95_ms,
      hung_target_p95_ms: stats(signalMs.hung).p95_ms,
      hung_requests_open: held.length,
      load,
      note: 'a session signal (its transition) with a second webhook target that never answers, alternating with none',
    });
    spawnSync(process.execPath, [BIN, 'session', 'close', id], { cwd: dir, env });
  } finally {
    for (const res of held) res.socket?.destroy();
    await hub.close();
    hook.close();
    dead.close();
    server.kill('SIGINT');
    await new Promise((r) => server.once('exit', r));
    spawnSync('tmux', ['-S', join(home, 'tmux.sock'), 'kill-server']);
    rmSync(home, { recursive: true, force: true });
  }
}

/** A `trellis serve` of `dir` on a free port, once it says where. */
export function serveFor(dir: string, env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      if (/at (http:\/\/\S+)/.test(out)) resolve(child);
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
}
