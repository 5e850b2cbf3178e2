/**
 * The gateway's `/p/:id` proxy against the wire, side by side in one run: `GET /api/graph` answered 304
 * (If-None-Match, 50 connections) straight from the serve's child, through the serve's own raw TCP proxy
 * (the URL a user gets, "direct"), through a bare `http.request` pipe to the child in a process of its own
 * (what an HTTP-level proxy in Node costs with nothing checked), and through the gateway (which sends
 * its requests to the child directly, as the pipe does). Then 1,000 SSE clients on
 * `/p/A/api/graph/stream`, with the latency of `/p/A/api/graph` and `/p/B/api/graph` while they are open.
 */
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeProject } from '../src/store/trellis-home.js';
import { startCli } from './cli-process.js';
import { report, round, stats, tempRepo } from './lib.js';

const BARE_PIPE = fileURLToPath(new URL('./bare-pipe.js', import.meta.url));


const stop = async (child: ChildProcess) => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
};

/** Milliseconds of CPU (user + system) a process has used so far. */
const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};

function cannon(url: string, headers: Record<string, string>): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => autocannon({ url, connections: 50, duration: 5, headers }, (err, res) => (err ? reject(err) : resolve(res))));
}

/** One GET on a fresh connection: status and milliseconds, or null when it has not answered in `ms`. */
function timedGet(url: string, ms: number): Promise<{ status: number; ms: number } | null> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - t0 }));
    });
    req.setTimeout(ms, () => {
      req.destroy();
      resolve(null);
    });
    req.on('error', () => resolve(null));
  });
}

interface Serve {
  readonly dir: string;
  readonly child: ChildProcess;
  readonly publicUrl: string;
  readonly childUrl: string;
  readonly childPid: number;
  readonly cleanup: () => void;
}

async function startServe(env: NodeJS.ProcessEnv): Promise<Serve> {
  const { dir, cleanup } = tempRepo();
  writeFileSync(join(dir, 'trellis.json'), '{}\n');
  const { child, line } = await startCli(['serve', '--port', '0'], dir, env, /serving .* port \d+\)/);
  return { dir, child, cleanup, publicUrl: /at (http:\S+)/.exec(line)![1]!, childUrl: `http://127.0.0.1:${/port (\d+)\)/.exec(line)![1]}/`, childPid: Number(/pid (\d+), port/.exec(line)![1]) };
}

export async function gatewayProxyBench(): Promise<void> {
  const home = tempRepo();
  const env = { ...process.env, TRELLIS_HOME: home.dir };
  const children: ChildProcess[] = [];
  const serves: Serve[] = [];
  try {
    const gw = await startCli(['dashboard', '--port', '0'], home.dir, env, /dashboard at http/);
    children.push(gw.child);
    const gwUrl = /at (http\S+)/.exec(gw.line)![1]!;
    const a = await startServe(env);
    serves.push(a);
    children.push(a.child);
    const b = await startServe(env);
    serves.push(b);
    children.push(b.child);
    const bare = spawn(process.execPath, [BARE_PIPE, a.childUrl], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(bare);
    const [portLine] = (await once(bare.stdout!, 'data')) as [Buffer];
    const bareUrl = `http://127.0.0.1:${portLine.toString().trim()}/`;

    const etag = (await fetch(new URL('/api/graph', a.publicUrl))).headers.get('etag')!;
    const targets = {
      child: new URL('/api/graph', a.childUrl).href,
      direct: new URL('/api/graph', a.publicUrl).href,
      bare_pipe: new URL('/api/graph', bareUrl).href,
      gateway: new URL(`/p/${encodeProject(a.dir)}/api/graph`, gwUrl).href,
    };
    // Every path answers 304 to the same tag, or the comparison is void.
    for (const [name, url] of Object.entries(targets)) {
      const s = (await fetch(url, { headers: { 'if-none-match': etag } })).status;
      if (s !== 304) throw new Error(`${name} answered ${s}, not 304`);
    }
    const pids = { gateway: gw.child.pid!, bare_pipe: bare.pid!, supervisor: a.child.pid!, child: a.childPid };
    const results: Record<string, autocannon.Result[]> = { child: [], direct: [], bare_pipe: [], gateway: [] };
    const cpu: Record<string, Record<string, number>> = {};
    const load0 = loadavg()[0]!;
    // Three alternating rounds, medians: drift in machine load hits every path alike.
    for (let round = 0; round < 3; round++) {
      for (const [name, url] of Object.entries(targets)) {
        const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid)]));
        const r = await cannon(url, { 'if-none-match': etag });
        if (r.non2xx !== r.requests.total || r.errors || r.timeouts) throw new Error(`${name}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.requests.total - r.non2xx} answers other than 304`);
        results[name]!.push(r);
        const into = (cpu[name] ??= {});
        for (const [k, pid] of Object.entries(pids)) into[k] = (into[k] ?? 0) + (cpuMs(pid) - before[k]!) / r.requests.total / 3;
      }
    }
    const median = (xs: autocannon.Result[], f: (r: autocannon.Result) => number) => xs.map(f).sort((x, y) => x - y)[1]!;
    const rate = Object.fromEntries(Object.entries(results).map(([k, rs]) => [k, median(rs, (r) => r.requests.average)]));
    const p99 = Object.fromEntries(Object.entries(results).map(([k, rs]) => [k, median(rs, (r) => r.latency.p99)]));
    report('gateway.proxy.graph_304', {
      connections: 50,
      req_per_s: Object.fromEntries(Object.entries(rate).map(([k, v]) => [k, Math.round(v)])),
      p99_ms: p99,
      ratio_gateway_to_direct: round(rate.gateway! / rate.direct!),
      ratio_bare_pipe_to_direct: round(rate.bare_pipe! / rate.direct!),
      ratio_gateway_to_bare_pipe: round(rate.gateway! / rate.bare_pipe!),
      ratio_direct_to_child: round(rate.direct! / rate.child!),
      target_ratio: 0.85,
      cpu_us_per_request: Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, Object.fromEntries(Object.entries(v).map(([p, us]) => [p, round(us * 1000)]))])),
      cores: cpus().length,
      load_avg_1m: [round(load0), round(loadavg()[0]!)],
    });
    await stop(bare);

    // 1,000 SSE clients on /p/A: every one gets its `ready`, and short requests to A and B still answer.
    const idA = encodeProject(a.dir);
    const idB = encodeProject(b.dir);
    const streamUrl = new URL(`/p/${idA}/api/graph/stream`, gwUrl);
    const clients: http.ClientRequest[] = [];
    let ready = 0;
    const t0 = performance.now();
    let allReadyMs: number | null = null;
    const allReady = new Promise<void>((resolve) => {
      for (let i = 0; i < 1000; i++) {
        const req = http.get(streamUrl, { agent: false, headers: { accept: 'text/event-stream' } }, (res) => {
          let seen = '';
          const onData = (d: Buffer) => {
            seen += d;
            if (!seen.includes('event: ready')) return;
            res.off('data', onData);
            res.resume();
            if (++ready === 1000) {
              allReadyMs = performance.now() - t0;
              resolve();
            }
          };
          res.on('data', onData);
        });
        req.on('error', () => {});
        clients.push(req);
      }
    });
    await Promise.race([allReady, new Promise((r) => setTimeout(r, 30_000))]);
    const samples = { a: [] as number[], b: [] as number[] };
    let timedOut = 0;
    for (let i = 0; i < 20; i++) {
      for (const [k, id] of [['a', idA], ['b', idB]] as const) {
        const r = await timedGet(new URL(`/p/${id}/api/graph`, gwUrl).href, 5_000);
        if (r && r.status === 200) samples[k].push(r.ms);
        else timedOut++;
      }
    }
    report('gateway.proxy.sse_1000', {
      sse_clients: 1000,
      served: ready,
      all_ready_ms: allReadyMs === null ? null : round(allReadyMs),
      graph_a: samples.a.length ? stats(samples.a) : null,
      graph_b: samples.b.length ? stats(samples.b) : null,
      graph_requests_unanswered_in_5s: timedOut,
      target_ms: 100,
      load_avg_1m: round(loadavg()[0]!),
    });
    for (const c of clients) c.destroy();
  } finally {
    for (const c of children.reverse()) await stop(c);
    for (const s of serves) s.cleanup();
    home.cleanup();
  }
}
