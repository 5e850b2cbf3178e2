/**
 * Other hosts over SSH (issue 31): a real sshd of the bench's own and a second TRELLIS_HOME as the remote
 * host. A 304 revalidation of /api/graph through the gateway to the remote project (gateway → ssh forward
 * → sshd → remote serve) beside the same through a local project, and a pane's keystroke echo through the
 * hop (WebSocket through the gateway and the SSH forward to a real tmux pane on the "remote" host).
 */
import autocannon from 'autocannon';
import { execFileSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { registerPane } from '../test/helpers/sessions.js';
import { startSshd } from '../test/helpers/sshd.js';
import { encodeProject } from '../src/store/trellis-home.js';
import { BIN } from './issues.js';
import { startCli } from './cli-process.js';
import { report, round, tempRepo } from './lib.js';
import { viewer } from './paneio.js';

function cannon(url: string, etag: string): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => autocannon({ url, connections: 8, duration: 5, headers: { 'if-none-match': etag } }, (err, res) => (err ? reject(err) : resolve(res))));
}


const pct = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

export async function hostsBench(): Promise<void> {
  const remote = tempRepo();
  const local = tempRepo();
  const remoteHome = join(remote.dir, '.home');
  const localHome = join(local.dir, '.home');
  const env = (home: string) => {
    const e: NodeJS.ProcessEnv = { ...process.env, TRELLIS_HOME: home };
    delete e.TMUX;
    return e;
  };
  const children: ChildProcess[] = [];
  const sshd = await startSshd();
  try {
    for (const d of [remote.dir, local.dir]) writeFileSync(join(d, 'trellis.json'), '{}\n');
    execFileSync('mkdir', ['-p', remoteHome]);
    const tmuxSock = join(remoteHome, 'tmux.sock');
    execFileSync('tmux', ['-S', tmuxSock, '-f', '/dev/null', 'new-session', '-d', '-s', 'echo', '-x', '80', '-y', '24', 'stty -icanon; cat > /dev/null'], { env: env(remoteHome) });
    await registerPane(remote.dir, remoteHome, 'echo');
    for (const [dir, home] of [[remote.dir, remoteHome], [local.dir, localHome]] as const) children.push((await startCli(['serve', '--port', '0'], dir, env(home), /serving .* at http/)).child);
    execFileSync(process.execPath, [BIN, 'projects', 'add', local.dir], { env: env(localHome) });
    execFileSync(process.execPath, [BIN, 'hosts', 'add', 'box', 'remote', '--trellis', `env TRELLIS_HOME=${remoteHome} ${process.execPath} ${BIN}`, '--ssh-config', sshd.sshConfig], { env: env(localHome) });
    const gw = await startCli(['dashboard', '--port', '0'], local.dir, env(localHome), /dashboard at http/);
    children.push(gw.child);
    const gwUrl = /at (http\S+)/.exec(gw.line)![1]!;
    const remoteId = `box~${encodeProject(remote.dir)}`;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const list = (await (await fetch(new URL('/projects', gwUrl))).json()) as { projects: { id: string; online: boolean }[] };
      if (list.projects.find((p) => p.id === remoteId)?.online) break;
      if (Date.now() > deadline) throw new Error('the remote project did not come online through ssh');
      await new Promise((r) => setTimeout(r, 100));
    }

    // Interleaved rounds, the median of each kept: the machine's load moves between runs.
    const runs: Record<'local' | 'ssh', autocannon.Result[]> = { local: [], ssh: [] };
    const targets = [['local', encodeProject(local.dir)], ['ssh', remoteId]] as const;
    const etags = new Map<string, string>();
    for (const [name, id] of targets) {
      const url = new URL(`/p/${id}/api/graph`, gwUrl).href;
      const etag = (await fetch(url)).headers.get('etag')!;
      const first = await fetch(url, { headers: { 'if-none-match': etag } });
      if (first.status !== 304) throw new Error(`${name}: expected a 304, got ${first.status}`);
      etags.set(name, etag);
    }
    for (let round_ = 0; round_ < 3; round_++) {
      for (const [name, id] of targets) {
        const r = await cannon(new URL(`/p/${id}/api/graph`, gwUrl).href, etags.get(name)!);
        if (r.non2xx !== r.requests.total) throw new Error(`${name}: not every answer was a 304`);
        runs[name].push(r);
      }
    }
    const median = (xs: autocannon.Result[], f: (r: autocannon.Result) => number) => xs.map(f).sort((a, b) => a - b)[1]!;
    const rate = Object.fromEntries(
      (['local', 'ssh'] as const).map((n) => [n, { req_per_s: Math.round(median(runs[n], (r) => r.requests.average)), p50_ms: median(runs[n], (r) => r.latency.p50), p99_ms: median(runs[n], (r) => r.latency.p99) }]),
    ) as Record<'local' | 'ssh', { req_per_s: number; p50_ms: number; p99_ms: number }>;
    report('hosts.graph_304', { connections: 8, local: rate.local, ssh: rate.ssh, ssh_over_local_throughput: round(rate.ssh.req_per_s / rate.local.req_per_s), load_avg_1m: round(loadavg()[0]!), cores: cpus().length });

    const echo = await viewer(`${gwUrl.replace(/^http/, 'ws')}p/${encodeURIComponent(remoteId)}/api/sessions/echo/socket`);
    const samples: number[] = [];
    for (let i = 0; i < 300; i++) {
      const ch = String.fromCharCode(97 + (i % 26));
      echo.tail = '';
      const t0 = performance.now();
      const got = echo.wait(ch);
      echo.input(ch);
      samples.push((await got) - t0);
    }
    echo.ws.close();
    report('hosts.pane_echo_via_ssh', { p50_ms: round(pct(samples.slice(20), 0.5)), p99_ms: round(pct(samples.slice(20), 0.99)), n: samples.length - 20, target_p99_ms: 50 });
  } finally {
    for (const c of children.reverse()) {
      if (c.exitCode === null && c.signalCode === null) {
        c.kill('SIGTERM');
        await once(c, 'exit');
      }
    }
    try {
      execFileSync('tmux', ['-S', join(remoteHome, 'tmux.sock'), 'kill-server']);
    } catch {}
    await sshd.kill();
    remote.cleanup();
    local.cleanup();
  }
}
