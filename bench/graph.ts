/** Speed of the read path: GET /api/graph rebuilds and 304s, req/s, and SSE fan-out. */
import autocannon from 'autocannon';
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import http from 'node:http';
import { once } from 'node:events';
import { replyToIssue } from '../src/store/issues/verbs.js';
import { LiveProject } from '../src/store/board/live.js';
import { openProject } from '../src/store/compose/open-project.js';
import { generateThreads } from './generate.js';
import { BIN } from './issues.js';
import { report, round, stats, tempRepo, time } from './lib.js';

const NODES = Number(process.env.BENCH_NODES ?? 1_000);
const THREADS = Number(process.env.BENCH_THREADS ?? 10_000);

/** A repository with NODES spec nodes (50 folders) and THREADS threads bound to them. */
export async function boardRepo(threads = THREADS): Promise<{ dir: string; cleanup: () => void; ids: string[] }> {
  const repo = tempRepo();
  for (let j = 0; j < NODES; j++) {
    mkdirSync(join(repo.dir, 'specs', `area${j % 50}`), { recursive: true });
    writeFileSync(join(repo.dir, 'specs', `area${j % 50}`, `node${j}.md`), `---\ntitle: Node ${j}\nstatus: draft\n---\n# Node ${j}\n\nSee [[area${(j + 1) % 50}/node${(j + 1) % NODES}]].\n\n## Rules\n- one\n`);
  }
  writeFileSync(join(repo.dir, 'trellis.json'), '{ "specRoot": "specs" }\n');
  execFileSync('git', ['add', '-A'], { cwd: repo.dir });
  execFileSync('git', ['commit', '-qm', 'specs'], { cwd: repo.dir });
  const ids = await generateThreads(repo.dir, threads, threads * 5);
  return { ...repo, ids };
}

export async function startServer(dir: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d) => {
      out += d;
      const m = /at (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
  return { url, child };
}

function cannon(url: string, headers: Record<string, string> = {}): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => autocannon({ url, connections: 16, duration: 4, headers }, (err, res) => (err ? reject(err) : resolve(res))));
}

export async function graphBench(): Promise<void> {
  const { dir, cleanup, ids } = await boardRepo();
  try {
    // In-process, with the real watchers: what a rebuild costs after each kind of change.
    const live = new LiveProject(openProject(dir));
    if (process.env.BENCH_DEBUG) {
      const orig = live.changed.bind(live);
      live.changed = (c) => (console.error('changed', c), orig(c));
    }
    live.start();
    // The watchers do not hold the process open (a server's socket does); this bench has no socket yet.
    const keepAlive = setInterval(() => {}, 1_000);
    const cold = await time(() => live.snapshot());
    report('graph.rebuild.cold', { ms: Math.round(cold.ms), nodes: NODES, threads: THREADS, bytes: cold.value.bytes.length, note: 'first build: every tip and every spec file read' });
    const writer = openProject(dir);
    const nextChange = () => new Promise<void>((resolve) => live.bus.on("change", function once() {
      if (process.env.BENCH_DEBUG) console.error("change", live.stats);
      live.bus.off('change', once);
      resolve();
    }));
    const afterWrite: number[] = [];
    for (let i = 0; i < 20; i++) {
      const changed = nextChange();
      await replyToIssue(writer, ids[i * 37]!, { body: `bench ${i}`, by: 'bench' });
      await changed;
      // A thread write is announced from the freshness stamp; the board is rebuilt on the next request.
      afterWrite.push((await time(() => live.snapshot())).ms);
    }
    report('graph.rebuild.after-thread-write', { ...stats(afterWrite), target_median_ms: 50 });
    const afterSpec: number[] = [];
    const specPath = join(dir, 'specs/area3/node3.md');
    for (let i = 0; i < 10; i++) {
      const changed = nextChange();
      writeFileSync(specPath, readFileSync(specPath, 'utf8').replace(/Node 3( v\d+)?\n/, `Node 3 v${i}\n`));
      await changed;
      afterSpec.push(live.stats.lastRebuildMs);
    }
    report('graph.rebuild.after-spec-edit', { ...stats(afterSpec), target_median_ms: 50 });
    const memo: number[] = [];
    for (let i = 0; i < 200; i++) memo.push((await time(() => live.snapshot())).ms);
    report('graph.snapshot.unchanged.in-process', stats(memo));
    await live.stop();
    clearInterval(keepAlive);

    // Over a real socket, against `trellis serve` in its own process.
    const { url, child } = await startServer(dir);
    try {
      const first = await fetch(new URL('/api/graph', url));
      const etag = first.headers.get('etag')!;
      await first.arrayBuffer();
      const full: number[] = [];
      const notModified: number[] = [];
      for (let i = 0; i < 50; i++) {
        full.push((await time(async () => (await fetch(new URL('/api/graph', url))).arrayBuffer())).ms);
        notModified.push((await time(async () => (await fetch(new URL('/api/graph', url), { headers: { 'If-None-Match': etag } })).arrayBuffer())).ms);
      }
      report('http.graph.200.unchanged', { ...stats(full), note: 'memoized board, full body on the wire' });
      report('http.graph.304', { ...stats(notModified), target_median_ms: 5 });
      const health = await cannon(new URL('/health', url).href);
      report('http.health.throughput', { req_per_s: Math.round(health.requests.average), p99_ms: health.latency.p99, non2xx: health.non2xx, errors: health.errors, connections: 16 });
      const cond = await cannon(new URL('/api/graph', url).href, { 'If-None-Match': etag });
      report('http.graph.304.throughput', { req_per_s: Math.round(cond.requests.average), p99_ms: cond.latency.p99, non304: cond.requests.total - (cond['3xx'] ?? 0), errors: cond.errors, connections: 16 });
    } finally {
      await stopServer(child);
    }
  } finally {
    cleanup();
  }
}

export async function stopServer(child: ChildProcess): Promise<void> {
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

/**
 * 500 SSE clients on real sockets, each a bare HTTP stream that watches for `event: graph`: the clients
 * share this process, so they are kept light to measure the server's fan-out rather than the cost of
 * 500 EventSource parsers on 2 cores (the tests use a real EventSource).
 */
/**
 * Latencies from the start of an append (in this process, another than the server's) to each of
 * `clients` subscribers of /api/graph/stream reading its event, over `writes` writes to `ids`.
 */
export async function sseLatencies(url: string, dir: string, ids: readonly string[], clients: number, writes: number): Promise<{ latencies: number[]; received: number }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: clients + 10 });
  const requests: http.ClientRequest[] = [];
  try {
    const latencies: number[] = [];
    let t0 = 0;
    let received = 0;
    await Promise.all(
      Array.from(
        { length: clients },
        () =>
          new Promise<void>((resolve, reject) => {
            const req = http.get(new URL('/api/graph/stream', url), { agent }, (res) => {
              res.setEncoding('utf8');
              res.on('data', (chunk: string) => {
                if (chunk.includes('event: ready')) resolve();
                // The write's own event only: a resync or a late event of an earlier run is not it.
                if (t0 > 0 && chunk.includes('event: graph') && chunk.includes('"cause":"issues"')) {
                  latencies.push(performance.now() - t0);
                  received++;
                }
              });
            });
            req.on('error', reject);
            requests.push(req);
          }),
      ),
    );
    const writer = openProject(dir);
    for (let round = 0; round < writes; round++) {
      const want = (round + 1) * clients;
      t0 = performance.now();
      await replyToIssue(writer, ids[round % ids.length]!, { body: `sse ${round}`, by: 'bench' });
      const deadline = Date.now() + 10_000;
      while (received < want && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
    }
    return { latencies, received };
  } finally {
    for (const r of requests) r.destroy();
    agent.destroy();
  }
}

export async function sseBench(): Promise<void> {
  const CLIENTS = Number(process.env.BENCH_SSE_CLIENTS ?? 500);
  const { dir, cleanup, ids } = await boardRepo();
  const { url, child } = await startServer(dir);
  try {
    const WRITES = 10;
    const { latencies } = await sseLatencies(url, dir, ids, CLIENTS, WRITES);
    const sorted = [...latencies].sort((a, b) => a - b);
    report('sse.fanout.thread-write', {
      clients: CLIENTS,
      writes: WRITES,
      received: latencies.length,
      expected: CLIENTS * WRITES,
      median_ms: round2(sorted[Math.floor(sorted.length / 2)] ?? NaN),
      p99_ms: round2(sorted[Math.floor(sorted.length * 0.99)] ?? NaN),
      max_ms: round2(sorted.at(-1) ?? NaN),
      target_p99_ms: 200,
      note: 'from the start of the append in another process to each client reading the event',
    });
  } finally {
    await stopServer(child);
    cleanup();
  }
}

const round2 = (n: number) => round(n);

/**
 * The board with 20 linked worktrees (sessions make them): 304s and their throughput against the same
 * board with none, side by side in one run, and the rebuild after an edit inside one worktree.
 */
export async function overlayBench(): Promise<void> {
  const WORKTREES = 20;
  const { dir, cleanup } = await boardRepo(Number(process.env.BENCH_OVERLAY_THREADS ?? 1_000));
  const wtBase = join(dir, '..', `${dir.split('/').pop()}-worktrees`);
  try {
    const { url, child } = await startServer(dir);
    const conditional = async (label: string) => {
      // The pooled keep-alive socket may have been reaped while idle (worktrees being added): retry once.
      const first = await fetch(new URL('/api/graph', url)).catch(() => fetch(new URL('/api/graph', url)));
      const etag = first.headers.get('etag')!;
      const board = (await first.json()) as { overlay: unknown[] };
      const notModified: number[] = [];
      for (let i = 0; i < 100; i++) notModified.push((await time(async () => (await fetch(new URL('/api/graph', url), { headers: { 'If-None-Match': etag } })).arrayBuffer())).ms);
      const run = await cannon(new URL('/api/graph', url).href, { 'If-None-Match': etag });
      return { label, worktrees: board.overlay.length, ...stats(notModified), req_per_s: Math.round(run.requests.average), non304: run.requests.total - (run['3xx'] ?? 0) };
    };
    try {
      const none = await conditional('no worktree');
      for (let i = 0; i < WORKTREES; i++) execFileSync('git', ['worktree', 'add', '-q', '-b', `bench-${i}`, join(wtBase, `wt${i}`)], { cwd: dir });
      writeFileSync(join(wtBase, 'wt3', 'specs/area3/node3.md'), '# edited in a worktree\n');
      const twenty = await conditional(`${WORKTREES} worktrees`);
      report('http.graph.304.worktrees', { none, twenty, throughput_ratio: round(twenty.req_per_s / none.req_per_s), target_ratio: 0.8, target_median_ms: 5 });
    } finally {
      await stopServer(child);
    }
    const live = new LiveProject(openProject(dir)).start();
    const keepAlive = setInterval(() => {}, 1_000);
    try {
      await live.snapshot();
      const afterEdit: number[] = [];
      for (let i = 0; i < 10; i++) {
        const changed = new Promise<void>((resolve) => live.bus.on('change', function once() {
          live.bus.off('change', once);
          resolve();
        }));
        // A node new to the overlay each time, so every edit moves the board's bytes.
        writeFileSync(join(wtBase, 'wt7', `specs/area7/new${i}.md`), `# new node ${i}, in one worktree\n`);
        await changed;
        afterEdit.push(live.stats.lastRebuildMs);
      }
      report('graph.rebuild.after-worktree-edit', { ...stats(afterEdit), worktrees: WORKTREES, overlay_entries_recomputed: live.overlay.stats.entries, target_median_ms: 50 });
    } finally {
      clearInterval(keepAlive);
      await live.stop();
    }
  } finally {
    cleanup();
    rmSync(wtBase, { recursive: true, force: true });
  }
}
