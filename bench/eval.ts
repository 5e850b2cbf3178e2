/** Speed of eval: the scoreboard over 500 scenarios × 20 scopes (10,000 readings), and a reading append. */
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EVAL_EVENT_FORMAT, scenarioKey, type EvalEvent } from '../src/events/index.js';
import { recordReading, scoreboard, type EvalSources } from '../src/store/eval/verbs.js';
import { openIssue, replyToIssue } from '../src/store/issues/verbs.js';
import { LiveProject } from '../src/store/board/live.js';
import { openProject } from '../src/store/compose/open-project.js';
import { exec, repeat, report, round, stats, tempRepo, time } from './lib.js';

const SCENARIOS = Number(process.env.BENCH_SCENARIOS ?? 500);
const SCOPES = Number(process.env.BENCH_SCOPES ?? 20);
const PER_NODE = 10;

/** 500 scenarios declared by 50 nodes, committed; one reading per scenario and scope through one `git fast-import`. */
export async function generate(dir: string): Promise<string[]> {
  const ids: string[] = [];
  for (let n = 0; n < SCENARIOS / PER_NODE; n++) {
    const lines: string[] = [];
    for (let k = 0; k < PER_NODE; k++) {
      const id = `area${n % 10}/node${n}/s${k}`;
      ids.push(id);
      lines.push(`  - { id: ${id}, run: "npm test -- ${id}", timeoutS: 120 }`);
    }
    mkdirSync(join(dir, 'specs', `area${n % 10}`), { recursive: true });
    writeFileSync(join(dir, 'specs', `area${n % 10}`, `node${n}.md`), `---\ntitle: Node ${n}\nscenarios:\n${lines.join('\n')}\n---\n# Node ${n}\n\nProse.\n`);
  }
  await exec('git', ['add', '-A'], dir);
  await exec('git', ['commit', '-q', '-m', 'scenarios'], dir);
  const child = spawn('git', ['fast-import', '--quiet', '--done'], { cwd: dir, stdio: ['pipe', 'inherit', 'inherit'] });
  const closed = new Promise<void>((resolve, reject) => child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`fast-import exited ${code}`)))));
  const base = Date.UTC(2026, 0, 1);
  let chunk = '';
  for (const [i, id] of ids.entries()) {
    for (let s = 0; s < SCOPES; s++) {
      const at = new Date(base + i * 60_000 + s * 1_000).toISOString();
      const event: EvalEvent = {
        v: EVAL_EVENT_FORMAT,
        type: 'measured',
        at,
        by: `sess-${s}`,
        clock: s + 1,
        data: { id: `r${i}x${s}`, scenario: id, scope: s === 0 ? 'trunk' : `sess-${s}`, commit: null, outcome: (i + s) % 7 ? 'pass' : 'fail', durationMs: 1000 + s, output: null },
      };
      const json = JSON.stringify(event);
      const secs = Math.floor(Date.parse(at) / 1000);
      chunk +=
        `commit refs/trellis/evals/${scenarioKey(id)}\n` +
        `author gen <> ${secs} +0000\ncommitter gen <> ${secs} +0000\ndata 8\nmeasured\n` +
        `M 100644 inline event.json\ndata ${Buffer.byteLength(json)}\n${json}\n\n`;
    }
    if (chunk.length > 1 << 20) {
      if (!child.stdin.write(chunk)) await new Promise((r) => child.stdin.once('drain', r));
      chunk = '';
    }
  }
  child.stdin.end(`${chunk}done\n`);
  await closed;
  return ids;
}

export async function evalBench(): Promise<void> {
  const { dir, cleanup } = tempRepo();
  try {
    const ids = await generate(dir);
    const cache = join(dir, '.git', 'trellis', 'cache');
    const cold: number[] = [];
    const cached: number[] = [];
    let cells = 0;
    for (let i = 0; i < 3; i++) {
      rmSync(cache, { recursive: true, force: true });
      const p = openProject(dir);
      const { ms, value } = await time(() => scoreboard(p));
      cold.push(ms);
      cells = value.scenarios.reduce((n, s) => n + s.cells.length, 0);
      // A new process with the projection cache written by the one before.
      await p.evals.flushCache();
      cached.push((await time(() => scoreboard(openProject(dir)))).ms);
    }
    report('eval.scoreboard.cold', { ...stats(cold), scenarios: ids.length, scopes: SCOPES, readings: ids.length * SCOPES, cells, target_ms: 1000 });
    report('eval.scoreboard.cold.with-projection-cache', stats(cached));

    // Warm, as the server reads it: watched spec tree, incremental thread reads, nothing changed since.
    const p = openProject(dir);
    const live = new LiveProject(p);
    const sources: EvalSources = { trunkTree: () => live.specTree(), readThreads: () => live.readThreads() };
    await scoreboard(p, sources);
    const warm = await repeat(50, () => scoreboard(p, sources));
    report('eval.scoreboard.warm', { ...stats(warm), target_median_ms: 30 });

    // A reading append through the one stream store (compare-and-swap), and the whole record verb.
    await p.evals.write(scenarioKey(ids[0]!), { type: 'measure', by: 'bench', at: new Date().toISOString(), reading: { id: 'warm-up', scenario: ids[0]!, scope: 'trunk', commit: null, outcome: 'pass', durationMs: 1, output: null } });
    const append = await repeat(200, (i) =>
      p.evals.write(scenarioKey(ids[i % ids.length]!), { type: 'measure', by: 'bench', at: new Date().toISOString(), reading: { id: `b${i}`, scenario: ids[i % ids.length]!, scope: 'trunk', commit: null, outcome: 'pass', durationMs: 1, output: null } }),
    );
    // The same store appending a thread reply in the same run: what the machine gives any stream kind now.
    const { id: thread } = await openIssue(p, { concern: 'baseline', by: 'bench' });
    const baseline = await repeat(200, (i) => replyToIssue(p, thread, { body: `r${i}`, by: 'bench' }));
    const a = stats(append);
    report('eval.append.in-process', { ...a, target_median_ms: 5, thread_reply_median_ms: stats(baseline).median_ms, ratio_to_thread_reply: round(a.median_ms / stats(baseline).median_ms) });
    const record = await repeat(50, (i) => recordReading(p, ids[i]!, { outcome: 'fail', by: 'bench' }));
    report('eval.record.verb.in-process', { ...stats(record), note: 'includes resolving the scope and reading the spec tree' });
    const after = await time(() => scoreboard(p, sources));
    report('eval.scoreboard.after-250-appends', { ms: round(after.ms) });
    await live.stop();
  } finally {
    cleanup();
  }
}
