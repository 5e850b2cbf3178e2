/**
 * What one agent hook event costs, both ways Trellis can take it (issue 28, cheap hooks): a command hook
 * starts a `trellis session signal` process per event (its whole CPU is the cost); an HTTP hook POSTs
 * the same JSON to the serve's loopback API (the serve's CPU, supervisor and child, is the cost; target
 * ≤ 10 ms). The same events both ways, alternating UserPromptSubmit (running) and Stop (awaiting): each
 * writes one event to the session's log. The session is a real claude (2.1.197) idle at its input.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { agentHome, stopAgentDaemons } from '../test/fake-model/agents.js';
import { startFakeModel } from '../test/fake-model/server.js';
import { BIN } from './issues.js';
import { report, round, stats } from './lib.js';

const EVENTS = Number(process.env.BENCH_HOOK_EVENTS ?? 40);
/** Clock ticks per second of /proc's CPU times (USER_HZ; 100 on Linux). */
const TICKS = 100;

/** CPU (ms) of a process and, with `children`, of its waited-for children, from /proc. */
export function cpuMs(pid: number | 'self', children = false): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
  // After the name: state(0) … utime(11) stime(12) cutime(13) cstime(14).
  return ((children ? f[13]! + f[14]! : f[11]! + f[12]!) * 1000) / TICKS;
}

/** A real claude (2.1.197, on the fake model) in a Trellis session, idle at its input after its first turn. */
export interface ClaudeAtRest {
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
  readonly id: string;
  /** The agent's own session id, as its hooks' JSON carries it. */
  readonly agentSession: string;
  readonly cli: (args: string[], input?: string) => SpawnSyncReturns<string>;
  readonly close: () => Promise<void>;
}

/**
 * `unconfined`: the session runs outside a sandbox (`sessions.confine: "off"`), its command hooks the shell
 * program that reaches its recorder (verbs/hook-socket.ts), as `npm run bench -- cli` measures them.
 */
export async function claudeAtRest(opts: { unconfined?: boolean } = {}): Promise<ClaudeAtRest> {
  const fake = await startFakeModel();
  const root = mkdtempSync(join(tmpdir(), 'trellis-bench-hooks-'));
  const dir = join(root, 'repo');
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  execFileSync('git', ['-C', dir, 'commit', '-q', '--allow-empty', '-m', 'init'], { env: { ...process.env, GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@e', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@e' } });
  writeFileSync(join(dir, 'trellis.json'), '{}\n');
  writeFileSync(join(dir, 'trellis.local.json'), JSON.stringify({ sessions: { max: 8, minFreeMb: 0, ...(opts.unconfined ? { confine: 'off' } : {}) } }));
  const agent = agentHome(fake.url, { trust: [dir] }, join(root, 'agent-home'));
  const env = { ...process.env, ...agent.env, TRELLIS_HOME: join(root, 'trellis-home'), SHELL: '/bin/sh', GIT_AUTHOR_NAME: 'b', GIT_AUTHOR_EMAIL: 'b@e', GIT_COMMITTER_NAME: 'b', GIT_COMMITTER_EMAIL: 'b@e' };
  const cli = (args: string[], input?: string) => spawnSync(process.execPath, [BIN, ...args], { cwd: dir, env, input, encoding: 'utf8' });
  const close = async () => {
    spawnSync('tmux', ['-S', join(env.TRELLIS_HOME, 'tmux.sock'), 'kill-server']);
    stopAgentDaemons(root);
    await fake.close();
    // The last hook's process and the worktree pool's refill can trail the tmux server by a moment.
    for (let i = 0; ; i++) {
      try {
        rmSync(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
        break;
      } catch (err) {
        if (i >= 20) throw err;
        stopAgentDaemons(root);
        await sleep(200);
      }
    }
  };
  try {
    const id = (JSON.parse(cli(['session', 'spawn', 'Say hi', '--harness', 'claude', '--json']).stdout) as { id: string }).id;
    const show = () => JSON.parse(cli(['session', 'show', id, '--json']).stdout) as { state: string; reason: string | null; agentSessionId: string | null };
    for (let i = 0; show().reason !== 'turn-end'; i++) {
      if (i > 300) throw new Error(`claude session ${id} never ended its first turn`);
      await sleep(100);
    }
    return { dir, env, id, agentSession: show().agentSessionId ?? 'bench', cli, close };
  } catch (err) {
    await close();
    throw err;
  }
}

/** One hook event's JSON as claude sends it to a command hook's standard input. */
export const hookPayload = (event: string, sessionId: string) =>
  JSON.stringify(event === 'Stop' ? { session_id: sessionId, hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'Done.' } : { session_id: sessionId, hook_event_name: 'UserPromptSubmit', prompt: 'bench' });

export async function hookCpuBench(): Promise<void> {
  const { dir, env, id, agentSession, cli, close } = await claudeAtRest();
  let serve: ChildProcess | undefined;
  try {
    const events = Array.from({ length: EVENTS }, (_, i) => (i % 2 === 0 ? 'UserPromptSubmit' : 'Stop'));

    // The command hook: one `trellis session signal` process per event, its CPU counted as our child's.
    const commandWall: number[] = [];
    const beforeCommand = cpuMs('self', true);
    for (const event of events) {
      const t0 = performance.now();
      const r = cli(['session', 'signal', id, event], hookPayload(event, agentSession));
      if (r.status !== 0) throw new Error(`session signal exited ${r.status}: ${r.stderr}`);
      commandWall.push(performance.now() - t0);
    }
    const commandCpu = (cpuMs('self', true) - beforeCommand) / events.length;

    // The HTTP hook: a POST to the serve's loopback API; the serve's processes' CPU.
    serve = spawn(process.execPath, [BIN, 'serve', '--port', '0'], { cwd: dir, env, stdio: ['ignore', 'pipe', 'inherit'] });
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      serve!.stdout!.on('data', (d) => {
        out += d;
        const l = out.split('\n').find((x) => /serving .* port \d+\)/.test(x));
        if (l) resolve(l);
      });
      serve!.on('exit', (code) => reject(new Error(`trellis serve exited ${code}`)));
    });
    const url = /at (http:\S+)/.exec(line)![1]!.replace(/\/$/, '');
    const childPid = Number(/pid (\d+), port/.exec(line)![1]);
    const serveCpu = () => cpuMs(serve!.pid!) + cpuMs(childPid);
    // Warm: the first requests load the route's modules.
    for (const event of ['UserPromptSubmit', 'Stop']) await fetch(`${url}/api/sessions/${id}/signal/${event}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: hookPayload(event, agentSession) });
    await sleep(1_000);
    const httpWall: number[] = [];
    const beforeHttp = serveCpu();
    for (const event of events) {
      const t0 = performance.now();
      const r = await fetch(`${url}/api/sessions/${id}/signal/${event}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: hookPayload(event, agentSession) });
      if (r.status !== 200) throw new Error(`POST signal answered ${r.status}: ${await r.text()}`);
      httpWall.push(performance.now() - t0);
    }
    // The serve's own background work (pane reads every 700 ms) over the same time is measured apart.
    const httpCpu = (serveCpu() - beforeHttp) / events.length;
    const idleFrom = serveCpu();
    const idleWindow = httpWall.reduce((a, b) => a + b, 0);
    await sleep(idleWindow);
    const idleCpu = (serveCpu() - idleFrom) / events.length;
    report('agents.hook-cpu-per-event', {
      events: events.length,
      command_hook_cpu_ms: round(commandCpu),
      command_hook_wall: stats(commandWall),
      http_hook_serve_cpu_ms: round(httpCpu),
      http_hook_serve_cpu_ms_net_of_idle: round(Math.max(0, httpCpu - idleCpu)),
      http_hook_wall: stats(httpWall),
      target_http_ms: 10,
      cores: cpus().length,
      load_avg_1m: round(loadavg()[0]!),
      note: 'same events both ways (UserPromptSubmit/Stop alternating, one log write each); CPU from /proc at 10 ms ticks',
    });
  } finally {
    if (serve && serve.exitCode === null) {
      serve.kill('SIGTERM');
      await new Promise((r) => serve!.once('exit', r));
    }
    await close();
  }
}
