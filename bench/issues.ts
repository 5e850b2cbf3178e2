/** Speed of the issue store: appends, the CLI, and the merged list over 10,000 threads. */
import { execFileSync, spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { catFileChainReader } from '../src/store/git/cat-file-chain-reader.js';
import { isoChainReader } from '../src/store/git/iso-chain-reader.js';
import { setPowerLossSyncs } from '../src/store/git/durable.js';
import { readTips } from '../src/store/git/refs.js';
import { THREAD_REF_PREFIX } from '../src/store/issues/thread-store.js';
import { openIssue, replyToIssue } from '../src/store/issues/verbs.js';
import { mergedIssues } from '../src/store/issues/merged-list.js';
import { openProject } from '../src/store/compose/open-project.js';
import { generateThreads } from './generate.js';
import { exec, repeat, report, round, stats, tempRepo, time } from './lib.js';

export const BIN = fileURLToPath(new URL('../src/cli/bin.js', import.meta.url));
const THREADS = Number(process.env.BENCH_THREADS ?? 10_000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 50_000);

export async function appendBench(): Promise<void> {
  const { dir, cleanup } = tempRepo();
  try {
    const p = openProject(dir);
    const { id } = await openIssue(p, { concern: 'bench', by: 'bench' });
    await replyToIssue(p, id, { body: 'warm-up', by: 'bench' });
    const samples = await repeat(300, (i) => replyToIssue(p, id, { body: `reply ${i}`, by: 'bench' }));
    report('append.in-process', { ...stats(samples), target_median_ms: 5 });

    // What the power-loss syncs cost (issue 19): the same appends with and without them, interleaved
    // one by one so both see the same disk and the same load, as a ratio with the load average beside it.
    const load = loadavg()[0]!;
    const withSyncs: number[] = [];
    const withoutSyncs: number[] = [];
    for (let i = 0; i < 200; i++) {
      for (const on of i % 2 ? [true, false] : [false, true]) {
        setPowerLossSyncs(on);
        (on ? withSyncs : withoutSyncs).push((await time(() => replyToIssue(p, id, { body: `fsync ${on} ${i}`, by: 'bench' }))).ms);
      }
    }
    setPowerLossSyncs(true);
    const after = stats(withSyncs);
    const before = stats(withoutSyncs);
    report('append.fsync-cost', {
      note: 'one reply (3 loose objects + 1 ref): after = each object and ref fsynced before its rename and its folder after; before = without those syncs',
      before_median_ms: before.median_ms,
      after_median_ms: after.median_ms,
      ratio_after_to_before: round(after.median_ms / before.median_ms),
      fsync_cost_per_append_ms: round(after.median_ms - before.median_ms),
      before_p95_ms: before.p95_ms,
      after_p95_ms: after.p95_ms,
      n: after.n,
      file_system: fileSystemOf(dir),
      load_avg_1m: [round(load), round(loadavg()[0]!)],
    });

    const env = { ...process.env, TRELLIS_SESSION: '' };
    // A fresh CLI process per reply, each to a thread of a typical length (a handful of events)...
    const short: string[] = [];
    for (let i = 0; i < 20; i++) {
      const t = await openIssue(p, { concern: `cli ${i}`, by: 'bench' });
      for (let k = 0; k < 4; k++) await replyToIssue(p, t.id, { body: `r${k}`, by: 'bench' });
      short.push(t.id);
    }
    const cli = await repeat(20, (i) => exec(process.execPath, [BIN, 'issue', 'reply', short[i]!, '--body', 'cli', '--by', 'bench'], dir, env));
    report('cli.issue-reply.end-to-end', { ...stats(cli), thread_events: 5, target_median_ms: 150 });
    const cliGitAuthor = await repeat(20, (i) => exec(process.execPath, [BIN, 'issue', 'reply', short[i]!, '--body', 'cli'], dir, env));
    report('cli.issue-reply.end-to-end.author-from-git-config', { ...stats(cliGitAuthor), thread_events: 6 });
    // ...and to the long thread above.
    const long = await repeat(10, (i) => exec(process.execPath, [BIN, 'issue', 'reply', id, '--body', `cli ${i}`, '--by', 'bench'], dir, env));
    report('cli.issue-reply.end-to-end.long-thread', { ...stats(long), thread_events: 302 });
    const nodeBare = await repeat(10, () => exec(process.execPath, ['-e', '0'], dir));
    report('node.startup.baseline', stats(nodeBare));
  } finally {
    cleanup();
  }
}

/** The file system type under `dir` (an fsync on tmpfs costs nothing: the figure means little there). */
function fileSystemOf(dir: string): string {
  try {
    return execFileSync('df', ['--output=fstype', dir], { encoding: 'utf8' }).trim().split('\n').pop()!.trim();
  } catch {
    return 'unknown';
  }
}

/** Peak RSS of a fresh process building the merged list, cold or warm. */
function rssOfList(dir: string): Promise<{ maxrss_mb: number; ms: number; issues: number }> {
  const script = `
    import { mergedIssues } from ${JSON.stringify(new URL('../src/store/issues/merged-list.js', import.meta.url).href)};
    import { openProject } from ${JSON.stringify(new URL('../src/store/compose/open-project.js', import.meta.url).href)};
    const t0 = performance.now();
    const { issues } = await mergedIssues(openProject(process.cwd()));
    const ms = performance.now() - t0;
    console.log(JSON.stringify({ maxrss_mb: Math.round(process.resourceUsage().maxRSS / 1024), ms: Math.round(ms), issues: issues.length }));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`rss probe exited ${code}`))));
  });
}

export async function listBench(): Promise<void> {
  const { dir, cleanup } = tempRepo();
  try {
    const gen = await time(() => generateThreads(dir, THREADS, EVENTS));
    const gitdir = join(dir, '.git');
    report('generate', { threads: THREADS, events: EVENTS, ms: Math.round(gen.ms) });
    const cachePath = join(gitdir, 'trellis/cache/issues.json');
    const dropCache = () => execFileSync('rm', ['-f', cachePath]);

    const tipsLoose = await repeat(20, () => readTips(gitdir, THREAD_REF_PREFIX));
    report('tips.read.loose-refs', { ...stats(tipsLoose), refs: readTips(gitdir, THREAD_REF_PREFIX).size, target_ms: 50 });

    // Cold: no cache file, a fresh process-level store. Side by side with the warm paths below.
    const cold: number[] = [];
    for (let i = 0; i < 3; i++) {
      dropCache();
      cold.push((await time(() => mergedIssues(openProject(dir)))).ms);
    }
    report('list.merged.cold', { ...stats(cold), threads: THREADS, events: EVENTS, target_ms: 2000, note: 'includes writing the projection cache' });

    const p = openProject(dir);
    await mergedIssues(p);
    const warm = await repeat(20, () => mergedIssues(p));
    report('list.merged.warm.in-process', { ...stats(warm), target_ms: 50 });
    const fromDisk = await repeat(5, () => mergedIssues(openProject(dir)));
    report('list.merged.warm.from-disk-cache', stats(fromDisk));
    report('list.merged.cold-vs-warm', { ratio: round(stats(cold).median_ms / stats(warm).median_ms) });

    const ls = await repeat(5, () => exec(process.execPath, [BIN, 'issue', 'ls', '--json'], dir));
    const bytes = Buffer.byteLength(await exec(process.execPath, [BIN, 'issue', 'ls', '--json'], dir));
    report('cli.issue-ls-json.wall', { ...stats(ls), bytes, target_ms: 400 });

    dropCache();
    report('list.merged.rss.cold', await rssOfList(dir));
    report('list.merged.rss.warm', await rssOfList(dir));

    execFileSync('git', ['pack-refs', '--all'], { cwd: dir });
    const tipsPacked = await repeat(20, () => readTips(gitdir, THREAD_REF_PREFIX));
    report('tips.read.packed-refs', { ...stats(tipsPacked), target_ms: 50 });

    // Chain readers side by side on the same 1,000 threads read from their roots.
    const tips = [...readTips(gitdir, THREAD_REF_PREFIX).values()].slice(0, 1000).map((tip) => ({ tip, stopAt: null }));
    const iso = (await time(() => isoChainReader(gitdir).read(tips))).ms;
    const cat = (await time(() => catFileChainReader(gitdir).read(tips))).ms;
    report('chain-read.1000-threads', { isomorphic_git_ms: Math.round(iso), cat_file_ms: Math.round(cat), ratio: round(iso / cat) });
  } finally {
    cleanup();
  }
}
