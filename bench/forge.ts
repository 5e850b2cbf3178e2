/**
 * Forge issues: each driver's pull of 1,000 issues with 5,000 comments from its stand-in, cold and then
 * incremental with 10 changed; GitHub's resident refresh, full and conditional; the merged list over HTTP.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GitHubForge } from '../test/forge/github-forge.js';
import { subjects, type AnyForge, type Subject } from '../test/forge/standins.js';
import { GitHubDriver } from '../src/store/forge/github.js';
import { serveProject } from '../src/http/serve.js';
import { openProject } from '../src/store/compose/open-project.js';
import { generateThreads } from './generate.js';
import { repeat, report, stats, tempRepo, time } from './lib.js';

const FORGE_ISSUES = Number(process.env.BENCH_FORGE_ISSUES ?? 1_000);
const LOCAL_THREADS = Number(process.env.BENCH_THREADS ?? 10_000);

export async function forgeBench(): Promise<void> {
  for (const s of subjects) await pullBench(s);
  const forge = await new GitHubForge().start();
  try {
    for (let i = 1; i <= FORGE_ISSUES; i++) forge.seed({ title: `Forge issue ${i}`, body: `Body ${i}\n\nSpec: area${i % 50}/node${i % 1000}`, labels: i % 7 ? [] : ['bug'] });
    for (let i = 1; i <= FORGE_ISSUES; i += 3) forge.seedComment(i, `Comment on ${i}`);
    const driver = new GitHubDriver({ driver: 'github', host: 'github.com', repo: 'acme/shop', apiUrl: forge.apiUrl }, {});
    const full = await time(() => driver.list());
    report('forge.refresh.full', { ms: Math.round(full.ms), issues: full.value.entries.length, requests: full.value.requests, per_page: 100 });
    const conditional = await repeat(10, () => driver.list());
    const last = await driver.list();
    report('forge.refresh.conditional', { ...stats(conditional), requests: last.requests, not_modified: last.notModifiedRequests, note: 'every page answered 304' });
    report('forge.refresh.full-vs-conditional', { ratio: Math.round((full.ms / stats(conditional).median_ms) * 100) / 100 });

    const { dir, cleanup } = tempRepo();
    try {
      await generateThreads(dir, LOCAL_THREADS, LOCAL_THREADS * 5);
      writeFileSync(join(dir, 'trellis.json'), JSON.stringify({ forges: [{ driver: 'github', host: 'github.com', repo: 'acme/shop', apiUrl: forge.apiUrl }] }));
      const served = await serveProject(openProject(dir), { port: 0 });
      try {
        await served.live.project.forges.refresh();
        const url = new URL('/api/issues', served.url);
        const first = (await (await fetch(url)).json()) as { issues: unknown[] };
        const samples = await repeat(30, async () => (await fetch(url)).arrayBuffer());
        report('http.issues.merged', { ...stats(samples), local: LOCAL_THREADS, forge: FORGE_ISSUES, issues: first.issues.length, target_median_ms: 50, note: 'unchanged refs: memoized list, body on the wire' });
      } finally {
        await served.close();
      }
    } finally {
      cleanup();
    }
  } finally {
    await forge.stop();
  }
}

const PULL_ISSUES = Number(process.env.BENCH_FORGE_PULL_ISSUES ?? 1_000);
const PULL_COMMENTS = PULL_ISSUES * 5;
const CHANGED = 10;

/** One driver against its stand-in: the cold pull, one with 10 issues changed, one with none. */
async function pullBench(s: Subject): Promise<void> {
  const f: AnyForge = await s.start('bench-token');
  try {
    for (let i = 1; i <= PULL_ISSUES; i++) f.seed({ title: `Forge issue ${i}`, body: `Body ${i}\n\nSpec: area${i % 50}/node${i}`, labels: i % 7 ? [] : ['bug'] });
    for (let c = 0; c < PULL_COMMENTS; c++) f.seedComment((c % PULL_ISSUES) + 1, `Comment ${c}`);
    const driver = s.driver(f, { [s.tokenEnv]: 'bench-token' });
    const cold = await time(() => driver.list());
    const replies = cold.value.entries.reduce((n, e) => n + e.issue.replies.length, 0);
    for (let i = 1; i <= CHANGED; i++) f.seedComment(i * 97, 'changed');
    const incremental = await time(() => driver.list());
    const unchanged = await time(() => driver.list());
    const fields = (r: typeof cold) => ({ ms: Math.round(r.ms), requests: r.value.requests });
    report(`forge.pull.${s.driverName}`, {
      issues: cold.value.entries.length,
      comments: replies,
      cold: fields(cold),
      incremental: { ...fields(incremental), changed: CHANGED },
      unchanged: { ...fields(unchanged), not_modified: unchanged.value.notModified },
      how: s.incremental === 'since' ? `${s.sinceParam}= since the last pull` : 'conditional requests (ETag): 304s cost no rate limit',
    });
  } finally {
    await f.stop();
  }
}
