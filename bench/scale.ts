/**
 * Scale (issue 8): the CLI reply against node's own start-up, cold lists against the git floor at 10k
 * and 50k threads (with peak RSS), all tips, the warm list, the /health gap while a thread is written at
 * 50k, and 20,000 appends kept tidy by the background gc. Generated repositories are kept under
 * `$TMPDIR/trellis-bench-fixtures/` (BENCH_KEEP_FIXTURES=0 removes them afterwards): 50k threads take
 * about a minute to generate. `BENCH_SCALE` picks parts (see scaleBench).
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { chooseEntry } from '../src/cli/entry-choice.js';
import { GitAppendLog } from '../src/store/git/append-log.js';
import { GC_AUTO, looseCounts, looseObjectEstimate } from '../src/store/git/housekeeping.js';
import { readTips } from '../src/store/git/refs.js';
import { THREAD_REF_PREFIX } from '../src/store/issues/thread-store.js';
import { openIssue, replyToIssue } from '../src/store/issues/verbs.js';
import { mergedIssues } from '../src/store/issues/merged-list.js';
import { openProject } from '../src/store/compose/open-project.js';
import { generateThreads } from './generate.js';
import { startServer, stopServer } from './graph.js';
import { BIN } from './issues.js';
import { exec, repeat, report, round, stats, tempRepo, time } from './lib.js';

const FIXTURES = join(tmpdir(), 'trellis-bench-fixtures');
const median = (xs: number[]) => stats(xs).median_ms;

/** A repository of `threads` threads (5 events each on average), generated once and kept. */
export async function fixture(threads: number): Promise<string> {
  const dir = join(FIXTURES, `threads-${threads}`);
  if (!existsSync(join(dir, '.git', 'generated'))) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    execFileSync('git', ['init', '-q', '-b', 'main', dir]);
    const gen = await time(() => generateThreads(dir, threads, threads * 5));
    report('scale.generate', { threads, events: threads * 5, ms: Math.round(gen.ms) });
    writeFileSync(join(dir, '.git', 'generated'), '');
  }
  // A Trellis project: elsewhere `trellis serve` serves a copy of the demo project, not these threads.
  if (!existsSync(join(dir, 'trellis.json'))) writeFileSync(join(dir, 'trellis.json'), '{}\n');
  return dir;
}

/** The git floor: for-each-ref | rev-list | cat-file --batch over the same events, as one shell pipeline. */
function gitFloor(dir: string): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const sh = spawn(
      '/bin/sh',
      ['-c', `git for-each-ref --format='%(objectname)' ${THREAD_REF_PREFIX} | git rev-list --stdin | sed 's/$/:event.json/' | git cat-file --batch > /dev/null`],
      { cwd: dir, stdio: 'ignore' },
    );
    sh.on('close', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`floor exited ${code}`))));
  });
}

/** A cold merged list in a fresh process (no projection cache): its time and peak RSS. */
function coldList(dir: string): Promise<{ ms: number; maxrss_mb: number; issues: number }> {
  rmSync(join(dir, '.git', 'trellis', 'cache'), { recursive: true, force: true });
  const script = `
    import { mergedIssues } from ${JSON.stringify(new URL('../src/store/issues/merged-list.js', import.meta.url).href)};
    import { openProject } from ${JSON.stringify(new URL('../src/store/compose/open-project.js', import.meta.url).href)};
    const t0 = performance.now();
    const { issues } = await mergedIssues(openProject(process.cwd()));
    console.log(JSON.stringify({ ms: performance.now() - t0, maxrss_mb: Math.round(process.resourceUsage().maxRSS / 1024), issues: issues.length }));`;
  return exec(process.execPath, ['--input-type=module', '-e', script], dir).then((out) => JSON.parse(out));
}

/**
 * The fixture as a repository that git gc or `trellis sync` has been through: the same objects and
 * refs, plus the commit-graph both write (gc.writeCommitGraph, fetch.writeCommitGraph). A copy, so the
 * generated fixture (no graph: what a bulk import leaves) is measured too.
 */
async function graphFixture(threads: number): Promise<string> {
  const dir = join(FIXTURES, `threads-${threads}-graph`);
  // The graph is written last: a copy cut short is made again.
  if (!existsSync(join(dir, '.git', 'objects', 'info', 'commit-graph'))) {
    rmSync(dir, { recursive: true, force: true });
    execFileSync('cp', ['-a', await fixture(threads), dir]);
    execFileSync('git', ['commit-graph', 'write', '--reachable'], { cwd: dir });
  }
  return dir;
}

/** Both fixtures of `threads`: as generated, and with the commit-graph gc or sync leaves. */
export async function coldVersusFloor(threads: number): Promise<void> {
  await coldVersusFloorIn(await fixture(threads), threads, `scale.list.cold.${threads}`, 'as generated: no commit-graph');
  await coldVersusFloorIn(await graphFixture(threads), threads, `scale.list.cold.${threads}.graph`, 'with the commit-graph git gc and trellis sync write');
}

async function coldVersusFloorIn(dir: string, threads: number, name: string, repository: string): Promise<void> {
  const floors: number[] = [];
  const colds: { ms: number; maxrss_mb: number; issues: number }[] = [];
  // Alternating, so the load of the machine weighs on both alike.
  for (let i = 0; i < 3; i++) {
    floors.push(await gitFloor(dir));
    colds.push(await coldList(dir));
  }
  const cold = median(colds.map((c) => c.ms));
  const floor = median(floors);
  report(name, {
    repository,
    threads,
    events: threads * 5,
    cold_median_ms: Math.round(cold),
    git_floor_median_ms: Math.round(floor),
    ratio: round(cold / floor),
    target_ratio: 1.0,
    peak_rss_mb: Math.max(...colds.map((c) => c.maxrss_mb)),
    target_rss_mb: threads >= 50_000 ? 350 : undefined,
    issues: colds[0]!.issues,
  });
}

async function tipsAndWarm(): Promise<void> {
  const big = await fixture(50_000);
  const gitdir = join(big, '.git');
  const loose = looseCounts(gitdir, THREAD_REF_PREFIX).refs;
  if (loose > 0) report('scale.tips.50k.loose', { ...stats(await repeat(10, () => readTips(gitdir, THREAD_REF_PREFIX))), loose_refs: loose });
  execFileSync('git', ['pack-refs', '--all'], { cwd: big });
  report('scale.tips.50k.packed', { ...stats(await repeat(20, () => readTips(gitdir, THREAD_REF_PREFIX))), target_ms: 20, note: 'packed-refs parsed once, re-read when its stat changes' });
  // Side by side: packed-refs changed before every read (touched), so each read parses it again.
  const packedRefs = join(gitdir, 'packed-refs');
  const reparse = await repeat(20, (i) => {
    const at = new Date(Date.now() - 60_000 + i * 1_000);
    utimesSync(packedRefs, at, at);
    return readTips(gitdir, THREAD_REF_PREFIX);
  });
  report('scale.tips.50k.packed.reparsed', { ...stats(reparse), target_ms: 20 });

  const ten = await fixture(10_000);
  const p = openProject(ten);
  await mergedIssues(p);
  report('scale.list.warm.10k', { ...stats(await repeat(20, () => mergedIssues(p))), target_ms: 50 });
}

/**
 * `trellis issue reply` end to end, side by side with `node -e 0` and with the same code run unbundled
 * (dist/src/cli/run.js, what the executable falls back to without a fresh bundle), alternating.
 */
async function replyVersusNode(): Promise<void> {
  const { dir, cleanup } = tempRepo();
  try {
    const p = openProject(dir);
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const { id } = await openIssue(p, { concern: `cli ${i}`, by: 'bench' });
      for (let k = 0; k < 4; k++) await replyToIssue(p, id, { body: `r${k}`, by: 'bench' });
      ids.push(id);
    }
    await mergedIssues(openProject(dir)); // the projection cache, as any earlier read leaves it
    const env = { ...process.env, TRELLIS_SESSION: '' };
    const bundle = new URL('../cli/run.js', import.meta.url);
    const unbundled = new URL('../src/cli/run.js', import.meta.url);
    const entry = chooseEntry(bundle, unbundled) === bundle ? 'bundle' : 'unbundled (the bundle is missing or stale: npm run build:cli)';
    const runUnbundled = `const { run } = await import(${JSON.stringify(unbundled.href)}); await run(process.argv.slice(1), process.cwd());`;
    const reply: number[] = [];
    const plain: number[] = [];
    const bare: number[] = [];
    const load = loadavg()[0]!;
    for (let i = 0; i < 20; i++) {
      const args = (n: number) => ['issue', 'reply', ids[n]!, '--body', 'cli', '--by', 'bench'];
      reply.push((await time(() => exec(process.execPath, [BIN, ...args(i)], dir, env))).ms);
      plain.push((await time(() => exec(process.execPath, ['--input-type=module', '-e', runUnbundled, ...args(19 - i)], dir, env))).ms);
      bare.push((await time(() => exec(process.execPath, ['-e', '0'], dir))).ms);
    }
    const over = round(median(reply) - median(bare));
    const overPlain = round(median(plain) - median(bare));
    report('scale.cli.issue-reply', {
      entry,
      reply_median_ms: median(reply),
      unbundled_median_ms: median(plain),
      node_startup_median_ms: median(bare),
      over_node_ms: over,
      unbundled_over_node_ms: overPlain,
      over_node_bundled_vs_unbundled: round(over / overPlain),
      target_over_node_ms: 45,
      loadavg_1m: [round(load), round(loadavg()[0]!)],
    });
  } finally {
    cleanup();
  }
}

/** /health polled every 5 ms from this process while a thread is written through the server at 50k threads. */
async function healthGapDuringWrite(): Promise<void> {
  const dir = await fixture(50_000);
  const { url, child } = await startServer(dir);
  if (process.env.BENCH_DEBUG) child.stdout!.on('data', (d) => process.stderr.write(d));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
  const get = (path: string, method = 'GET', body?: string, retry = true): Promise<string> =>
    new Promise<string>((resolve, reject) => {
      const req = http.request(new URL(path, url), { method, agent, headers: body ? { 'content-type': 'application/json' } : {} }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve(text));
      });
      req.on('error', (e: NodeJS.ErrnoException) => {
        // A kept-alive socket the server closed as the request left (its idle reaper): retry once on a
        // fresh one, as Node's documentation advises; the time spent stays in the measured gap.
        if (retry && req.reusedSocket && e.code === 'ECONNRESET') resolve(get(path, method, body, false));
        else reject(new Error(`${method} ${path}: ${e.message}`));
      });
      req.end(body);
    });
  try {
    // Warm: the first read folds every thread (and writes the projection cache); then the board is built.
    await get('/api/issues');
    await get('/api/graph');
    const id = readTips(join(dir, '.git'), THREAD_REF_PREFIX, { relative: true }).keys().next().value as string;
    /** The longest wait between /health answers over one window, with a reply written in it or not. */
    const window = async (round: number, write: boolean): Promise<number> => {
      let polling = true;
      let last = performance.now();
      let maxGap = 0;
      const poller = (async () => {
        while (polling) {
          await get('/health');
          const now = performance.now();
          maxGap = Math.max(maxGap, now - last);
          last = now;
          await new Promise((r) => setTimeout(r, 5));
        }
      })();
      // Awaited below; until then a failed poll must not crash the bench and orphan the server.
      poller.catch(() => {});
      await new Promise((r) => setTimeout(r, 200));
      if (write) {
        const answer = await get(`/api/issues/${id}/reply`, 'POST', JSON.stringify({ body: `gap ${round}`, by: 'bench' }));
        // A refused write would measure nothing: it must have appended.
        if (!answer.includes(`gap ${round}`)) throw new Error(`the reply was not written: ${answer.slice(0, 200)}`);
        // Past the server's deferred projection-cache save (2 s) and the board rebuild the write causes.
        await get('/api/graph');
      }
      await new Promise((r) => setTimeout(r, 2_500));
      polling = false;
      await poller;
      return maxGap - 5;
    };
    // Side by side, alternating: windows with a write, and idle windows as long (what the machine's load
    // alone does to the poll: the floor of this measurement).
    const gaps: number[] = [];
    const idle: number[] = [];
    for (let round = 0; round < 3; round++) {
      gaps.push(await window(round, true));
      idle.push(await window(round, false));
    }
    report('scale.health-gap.write.50k', {
      max_gap_ms: Math.round(Math.max(...gaps)),
      gaps_ms: gaps.map(Math.round),
      idle_max_gap_ms: Math.round(Math.max(...idle)),
      idle_gaps_ms: idle.map(Math.round),
      target_ms: 20,
      note: 'longest wait between /health answers (poll every 5 ms) around one reply, its SSE fan-out, board rebuild and cache save; idle: the same windows without a write',
    });
  } finally {
    agent.destroy();
    await stopServer(child);
  }
}

/** 20,000 appends through the object writer with the after-write gc check: what stays loose. */
async function appendsStayTidy(): Promise<void> {
  const N = Number(process.env.BENCH_APPENDS ?? 20_000);
  const { dir, cleanup } = tempRepo();
  try {
    const gitdir = join(dir, '.git');
    const log = new GitAppendLog(gitdir);
    mkdirSync(join(gitdir, 'refs/trellis/issues'), { recursive: true });
    const tips = new Map<string, string>();
    const t0 = performance.now();
    for (let i = 0; i < N; i++) {
      const id = `t${i % 10 < 3 ? i : i % 997}`;
      const tip = log.commit(tips.get(id) ?? null, [{ bytes: Buffer.from(JSON.stringify({ i })), subject: `event ${i}`, author: 'bench', at: new Date() }]);
      writeFileSync(join(gitdir, 'refs/trellis/issues', id), `${tip}\n`);
      tips.set(id, tip);
      log.housekeeping.afterWrite();
      await new Promise((r) => setImmediate(r));
    }
    await log.housekeeping.idle();
    log.housekeeping.afterWrite();
    await log.housekeeping.idle();
    const counts = looseCounts(gitdir, 'refs/trellis/');
    const fsck = execFileSync('git', ['fsck', '--strict', '--no-progress', '--no-dangling'], { cwd: dir, encoding: 'utf8' });
    report('scale.storage.appends', {
      appends: N,
      ms: Math.round(performance.now() - t0),
      loose_objects: counts.objects,
      loose_object_estimate: looseObjectEstimate(gitdir),
      gc_auto: GC_AUTO,
      loose_refs: counts.refs,
      threads: tips.size,
      fsck_clean: fsck === '',
    });
  } finally {
    cleanup();
  }
}

/** `BENCH_SCALE=reply,cold,tips,health,storage` runs only those parts (default: all). */
export async function scaleBench(): Promise<void> {
  const parts: [string, () => Promise<void>][] = [
    ['reply', replyVersusNode],
    ['cold', async () => (await coldVersusFloor(10_000), await coldVersusFloor(50_000))],
    ['tips', tipsAndWarm],
    ['health', healthGapDuringWrite],
    ['storage', appendsStayTidy],
  ];
  const only = process.env.BENCH_SCALE?.split(',');
  try {
    for (const [name, run] of parts) if (!only || only.includes(name)) await run();
  } finally {
    if (process.env.BENCH_KEEP_FIXTURES === '0') rmSync(FIXTURES, { recursive: true, force: true });
  }
}
