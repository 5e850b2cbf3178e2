/**
 * The host gateway: `/p/:id/api/graph` through the gateway against straight to the backend, side by
 * side in one run; `/projects` with 50 registered projects (25 online); the SSE push after a serve
 * starts; 200 concurrent WebSockets through `/p`, and the gateway's RSS.
 */
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { EventSource } from 'eventsource';
import WebSocket from 'ws';
import { writeEndpointRecord } from '../src/store/host/endpoint-record.js';
import { encodeProject } from '../src/store/trellis-home.js';
import { startCli } from './cli-process.js';
import { report, round, stats, tempRepo } from './lib.js';

const STANDINS = fileURLToPath(new URL('./gateway-standins.js', import.meta.url));

function cannon(url: string, connections: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => autocannon({ url, connections, duration: 5 }, (err, res) => (err ? reject(err) : resolve(res))));
}


const stop = async (child: ChildProcess) => {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
};

/** Milliseconds of CPU (user + system) a process has used so far. */
const cpuMs = (pid: number) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};

const rssMb = (pid: number) => round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024);

export async function gatewayBench(): Promise<void> {
  const { dir, cleanup } = tempRepo();
  const home = join(dir, '.home');
  const env = { ...process.env, TRELLIS_HOME: home };
  const children: ChildProcess[] = [];
  try {
    writeFileSync(join(dir, 'trellis.json'), '{}\n');
    const gw = await startCli(['dashboard', '--port', '0'], dir, env, /dashboard at http/);
    children.push(gw.child);
    const gwUrl = /at (http\S+)/.exec(gw.line)![1]!;

    // The SSE push: a registered project's serve comes up while /projects/stream is open.
    await fetch(new URL('/projects', gwUrl), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ path: dir }) });
    const es = new EventSource(new URL('/projects/stream', gwUrl).href);
    let onlineAt = 0;
    const pushed = new Promise<void>((resolve) =>
      es.addEventListener('projects', (e) => {
        if (JSON.parse(e.data).projects.find((p: { root: string }) => p.root === dir)?.online) {
          onlineAt = performance.now();
          resolve();
        }
      }),
    );
    await new Promise<void>((resolve) => es.addEventListener('projects', () => resolve(), { once: true }));
    const serve = await startCli(['serve', '--port', '0'], dir, env, /serving .* port \d+\)/);
    children.push(serve.child);
    await pushed;
    es.close();
    report('gateway.sse.push_after_serve_starts', { ms: round(Math.max(0, onlineAt - serve.at)), target_ms: 1000 });

    // Throughput: /api/graph through /p against straight to the serve, medians of three alternating runs.
    const direct = new URL('/api/graph', /at (http:\S+)/.exec(serve.line)![1]!).href;
    const proxied = new URL(`/p/${encodeProject(dir)}/api/graph`, gwUrl).href;
    const d: autocannon.Result[] = [];
    const p: autocannon.Result[] = [];
    // CPU per request of each process on the path: on a saturated machine the ratio follows these.
    const childPid = Number(/pid (\d+), port/.exec(serve.line)![1]);
    const pids = { gateway: gw.child.pid!, supervisor: serve.child.pid!, child: childPid };
    const cpuDirect = { gateway: 0, supervisor: 0, child: 0 };
    const cpuGateway = { gateway: 0, supervisor: 0, child: 0 };
    const measure = async (url: string, into: typeof cpuDirect, results: autocannon.Result[]) => {
      const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMs(pid)]));
      const r = await cannon(url, 16);
      results.push(r);
      for (const k of Object.keys(pids) as (keyof typeof pids)[]) into[k] += (cpuMs(pids[k]) - before[k]!) / r.requests.total;
    };
    for (let i = 0; i < 3; i++) {
      await measure(direct, cpuDirect, d);
      await measure(proxied, cpuGateway, p);
    }
    const per = (x: typeof cpuDirect) => Object.fromEntries(Object.entries(x).map(([k, v]) => [k, round((v / 3) * 1000)]));
    const median = (xs: autocannon.Result[], f: (r: autocannon.Result) => number) => xs.map(f).sort((a, b) => a - b)[1]!;
    const dRate = median(d, (r) => r.requests.average);
    const pRate = median(p, (r) => r.requests.average);
    const dP99 = median(d, (r) => r.latency.p99);
    const pP99 = median(p, (r) => r.latency.p99);
    report('gateway.throughput.graph', { connections: 16, direct_req_per_s: Math.round(dRate), gateway_req_per_s: Math.round(pRate), ratio: round(pRate / dRate), target_ratio: 0.6, direct_p99_ms: dP99, gateway_p99_ms: pP99, added_p99_ms: round(pP99 - dP99), cores: cpus().length, load_avg_1m: round(loadavg()[0]!), cpu_us_per_request_direct: per(cpuDirect), cpu_us_per_request_via_gateway: per(cpuGateway) });

    // /projects with 50 registered projects, 25 of them online (stand-in backends in a process of their own).
    const roots = Array.from({ length: 50 }, (_, i) => join(dir, 'many', `p${String(i).padStart(2, '0')}`));
    for (const r of roots) mkdirSync(r, { recursive: true });
    const standIns = spawn(process.execPath, [STANDINS, JSON.stringify(roots.slice(0, 25))], { stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(standIns);
    const [first] = (await once(standIns.stdout!, 'data')) as [Buffer];
    const { ports, instanceIds } = JSON.parse(first.toString()) as { ports: number[]; instanceIds: string[] };
    for (let i = 0; i < 25; i++) {
      const root = roots[i]!;
      await writeEndpointRecord(home, { version: 1, url: `http://127.0.0.1:${ports[i]}/`, pid: standIns.pid!, instanceId: instanceIds[i]!, root, identity: { toplevel: root, gitCommonDir: join(root, '.git'), worktree: false }, startedAt: new Date().toISOString() });
    }
    const catalog = JSON.parse(readFileSync(join(home, 'projects.json'), 'utf8')) as { version: number; projects: { root: string; addedAt: string }[] };
    catalog.projects.push(...roots.map((root) => ({ root, addedAt: new Date().toISOString() })));
    writeFileSync(join(home, 'projects.json'), JSON.stringify(catalog));
    const samples: number[] = [];
    let rows = 0;
    let onlineRows = 0;
    for (let i = 0; i < 30; i++) {
      const t0 = performance.now();
      const body = (await (await fetch(new URL('/projects', gwUrl))).json()) as { projects: { online: boolean }[] };
      samples.push(performance.now() - t0);
      rows = body.projects.length;
      onlineRows = body.projects.filter((x) => x.online).length;
    }
    report('gateway.projects.list', { registered: rows, online: onlineRows, ...stats(samples.slice(5)), target_ms: 100 });

    // 200 concurrent WebSockets through /p, each echoing.
    const wsUrl = new URL(`/p/${encodeProject(roots[0]!)}/ws`, gwUrl).href.replace(/^http/, 'ws');
    const rssBefore = rssMb(gw.child.pid!);
    const t0 = performance.now();
    const sockets = await Promise.all(
      Array.from(
        { length: 200 },
        (_, i) =>
          new Promise<WebSocket>((resolve, reject) => {
            const ws = new WebSocket(wsUrl);
            ws.on('open', () => ws.send(`hello ${i}`));
            ws.on('message', (m) => (m.toString() === `hello ${i}` ? resolve(ws) : reject(new Error(`wrong echo ${m}`))));
            ws.on('error', reject);
          }),
      ),
    );
    const ms = performance.now() - t0;
    const rssOpen = rssMb(gw.child.pid!);
    for (const s of sockets) s.close();
    report('gateway.websockets', { open_and_echoed: sockets.length, of: 200, ms: round(ms), gateway_rss_mb_before: rssBefore, gateway_rss_mb_with_200_open: rssOpen });
  } finally {
    for (const c of children.reverse()) await stop(c);
    cleanup();
  }
}
